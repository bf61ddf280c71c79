#!/bin/bash
# Host-side check of the manual pages (Documentation/man): each renders
# with `man -l` without a single groff or man warning (the command lintian
# runs), and names the project version in its title line.
set -u
cd "$(dirname "$0")/../.." || exit 2
version=$(cat VERSION)
fail=0
for page in Documentation/man/*.[0-9]; do
	warn=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
		man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null)
	if [ -n "$warn" ]; then
		echo "check-man-pages: $page:"
		echo "$warn" | sed 's/^/    /'
		fail=1
	fi
	grep -q "^\.TH .* \"softrnic $version\"" "$page" ||
		{ echo "check-man-pages: $page: .TH does not say \"softrnic $version\""; fail=1; }
	# The page must say something: a rendering of at least a screenful.
	[ "$(man -l "$page" 2>/dev/null | wc -l)" -ge 20 ] ||
		{ echo "check-man-pages: $page renders to almost nothing"; fail=1; }
done
[ $fail = 0 ] && echo "check-man-pages: OK ($(ls Documentation/man/*.[0-9] | wc -l) pages)"
exit $fail
