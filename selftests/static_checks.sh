#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The netdev CI's static checks hold over the whole tree
# (testbed/static-checks): ib_sdp builds with W=1 and sparse without a
# warning on each test bed kernel, kernel-doc -Wall finds nothing,
# checkpatch --strict finds nothing testbed/checkpatch-known does not
# list (and all it lists), codespell nothing but testbed/codespell-known's
# words, shellcheck nothing at severity warning.  And each check can
# fail: a copy of the tree with one new problem for each (an undeclared
# global for sparse, a function without prototype for W=1, an
# undocumented parameter, a checkpatch error, a misspelling, a cd
# unchecked in a script, a listed checkpatch finding that is gone) is
# caught by the check it is for.
# timeout: 1200
. "$(dirname "$0")/lib.sh"

sc=$SDP_REPO/testbed/static-checks
for c in kdoc checkpatch spell shell build; do
	if ! out=$("$sc" "$c" 2>&1); then
		echo "$out" | head -n 40 | sed 's/^/# /'
		check "static check $c finds nothing" false
	else
		check "static check $c finds nothing" true
	fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the copy: what the mutants need (the checks read what the copy has:
# less to check twice; checkpatch's GONE lines of the files left out
# are no matter)
(cd "$SDP_REPO" && git ls-files net include testbed selftests/harden.sh \
	selftests/lib.sh | cpio -pdm --quiet "$tmp")
cat >>"$tmp/net/sdp/sdp_tx.c" <<'EOF'

int sdp_static_mutant;

void sdp_static_mutant_fn(void)
{
}

/**
 * sdp_static_mutant_doc - says nothing of its argument
 */
static inline int sdp_static_mutant_doc(int undocumented)
{
	if (undocumented) {
		return 0;
	}
	return 1;
}
EOF
# (split: codespell reads this file too)
echo "/* a mutant that rec""ieves */" >>"$tmp/net/sdp/sdp_tx.c"
sed -i '2a cd /tmp' "$tmp/selftests/harden.sh"
echo "net/sdp/sdp_tx.c OPEN_ENDED_LINE 1" >>"$tmp/testbed/checkpatch-known"

# the mutant built for the first kernel only (the same code)
kver=$(unset KVER; . "$SDP_REPO/testbed/lib.sh"; testbed_kver)
# (only the files the mutants touched: the whole tree passed above)
out=$(for c in kdoc checkpatch spell shell "build $kver"; do
	# shellcheck disable=SC2086 # "build KVER": two words
	SDP_SRC=$tmp SDP_FILES="net/sdp/sdp_tx.c selftests/harden.sh" "$sc" $c 2>&1
done)
has() { echo "$out" | grep -qE "$1"; }
check "sparse finds the undeclared global" \
	has "build: $kver: net/sdp/sdp_tx.c:.*sdp_static_mutant' was not declared"
check "W=1 finds the function without a prototype" \
	has "build: $kver: net/sdp/sdp_tx.c:.*no previous prototype for .sdp_static_mutant_fn"
check "kernel-doc finds the undocumented parameter" \
	has "kdoc: net/sdp/sdp_tx.c:.*'undocumented' not described"
check "checkpatch finds the new braces" \
	has "checkpatch: NEW net/sdp/sdp_tx.c BRACES"
check "checkpatch finds a listed finding gone" \
	has "checkpatch: GONE net/sdp/sdp_tx.c OPEN_ENDED_LINE"
check "codespell finds the misspelling" \
	has "spell: net/sdp/sdp_tx.c:.*rec[i]eves"
check "shellcheck finds the unchecked cd" \
	has "shell: selftests/harden.sh:.*SC2164"
echo "$out" | grep -E 'sdp_tx\.c|harden\.sh' | sed 's/^/# /'
finish
