// SPDX-License-Identifier: GPL-2.0

// sdp_gohttp: a Go HTTP server and a Go HTTP client that know nothing of
// SDP (Go makes its own system calls: no LD_PRELOAD reaches it), for
// bpf_policy.sh and pair_bpf.sh, run under an sdp_bpf(8) policy.
//
//	sdp_gohttp serve ADDR:PORT       serve /blob (1 MiB) until killed
//	sdp_gohttp get ADDR:PORT N       GET /blob N times, check each
//	sdp_gohttp both ADDR:PORT N      both, in one process
//
// Prints each socket's SO_PROTOCOL ("listener proto P", "client proto
// P") and "N responses ok"; exits 0 if every body was right.
package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"time"
)

func blob() []byte {
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = byte(i*13 + i>>12)
	}
	return b
}

func proto(c syscall.RawConn) int {
	p := -1
	c.Control(func(fd uintptr) {
		p, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET,
			syscall.SO_PROTOCOL)
	})
	return p
}

func serve(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	rc, _ := ln.(*net.TCPListener).SyscallConn()
	fmt.Println("listener proto", proto(rc))
	b := blob()
	http.HandleFunc("/blob", func(w http.ResponseWriter, r *http.Request) {
		w.Write(b)
	})
	go http.Serve(ln, nil)
}

func get(addr string, n int) bool {
	printed := false
	d := &net.Dialer{Timeout: 10 * time.Second,
		Control: func(network, address string, c syscall.RawConn) error {
			if !printed {
				fmt.Println("client proto", proto(c))
				printed = true
			}
			return nil
		}}
	cl := &http.Client{Transport: &http.Transport{DialContext: d.DialContext},
		Timeout: 60 * time.Second}
	want := blob()
	good := 0
	for i := 0; i < n; i++ {
		r, err := cl.Get("http://" + addr + "/blob")
		if err != nil {
			fmt.Println("get:", err)
			continue
		}
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err == nil && bytes.Equal(body, want) {
			good++
		}
	}
	fmt.Printf("%d responses ok\n", good)
	return good == n
}

func main() {
	if len(os.Args) < 3 {
		fmt.Println("usage: sdp_gohttp serve|get|both ADDR:PORT [N]")
		os.Exit(2)
	}
	n := 10
	if len(os.Args) > 3 {
		n, _ = strconv.Atoi(os.Args[3])
	}
	switch os.Args[1] {
	case "serve":
		serve(os.Args[2])
		select {}
	case "get":
		if !get(os.Args[2], n) {
			os.Exit(1)
		}
	case "both":
		serve(os.Args[2])
		if !get(os.Args[2], n) {
			os.Exit(1)
		}
	}
}
