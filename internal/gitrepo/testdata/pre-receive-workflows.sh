#!/bin/sh
# A pre-receive hook that refuses, in GitHub's words, any push whose new
# commits create or change a file under .github/workflows/: what GitHub
# does for a token without the workflows permission.
zero=0000000000000000000000000000000000000000
status=0
while read -r old new ref; do
	[ "$new" = "$zero" ] && continue
	for f in $(git log --format= --name-only "$new" --not --all); do
		case "$f" in
		.github/workflows/*)
			echo "refusing to allow a GitHub App to create or update workflow \`$f\` without \`workflows\` permission" >&2
			status=1
			break
			;;
		esac
	done
done
exit $status
