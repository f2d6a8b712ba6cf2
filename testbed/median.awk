# SPDX-License-Identifier: GPL-2.0
# med(s): the median of the numbers in the space-separated string s; sets
# lo and hi to their minimum and maximum.  For the bench scripts, any awk:
#   awk "$(cat "$TESTBED_DIR/median.awk")"' ...program... '
function med(s,   a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
		if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	lo = a[1]; hi = a[n]
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
