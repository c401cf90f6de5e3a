#!/bin/sh
# Installs the man pages swift-argument-parser's generate-manual plugin made (ktv.score.take.1 …)
# as ktv-score-take.1 …, each ending with the examples of its `ktv … --help` page. A group that runs
# a default command (score → take, pitch → track, batch → run, replay → analyze) gets that
# command's page, so `man ktv-score` shows what `ktv score TAKE` takes.
# Usage: Tools/install-man.sh GENERATED_DIR MAN1_DIR KTV_BINARY
set -eu
src=$1 dest=$2 ktv=$3
mkdir -p "$dest"
default_of() {
  case $1 in
    ktv.score) echo take ;; ktv.pitch) echo track ;; ktv.batch) echo run ;; ktv.replay) echo analyze ;; *) echo "" ;;
  esac
}
count=0
for page in "$src"/ktv*.1; do
  base=$(basename "$page" .1)
  if [ "$base" = ktv.help ]; then continue; fi
  from=$page
  sub=$(default_of "$base")
  if [ -n "$sub" ]; then from="$src/$base.$sub.1"; fi
  name=$(echo "$base" | tr . -)
  words=$(echo "$base" | tr . ' ' | cut -d' ' -f2-)
  if [ "$base" = ktv ]; then words=""; fi
  title=$(echo "$name" | tr '[:lower:]' '[:upper:]')
  shown=$(echo "$base" | tr . ' ')
  out="$dest/$name.1"
  # The page, under the installed name.
  # See-also references under the installed names (ktv.batch → ktv-batch; no page for `help`).
  sed -e "s/^\.Dt [^ ]* /.Dt $title /" -e "s/^\.Nm \".*\"$/.Nm \"$shown\"/" \
      -e '/^\.Xr ktv\.help /d' -e '/^\.Xr /{s/\./-/g;s/^-Xr/.Xr/;}' "$from" > "$out.tmp"
  # The examples, as `ktv … --help` ends with them.
  # shellcheck disable=SC2086
  "$ktv" $words --help | sed -n '/^EXAMPLES:$/,$p' | sed '1d; s/^  //' > "$out.examples"
  # The generated page may not end with a newline.
  if [ -n "$(tail -c 1 "$out.tmp")" ]; then echo >> "$out.tmp"; fi
  if [ -s "$out.examples" ]; then
    { echo ".Sh EXAMPLES"; echo ".Bd -literal"; sed 's/^\([.'"'"']\)/\\\&\1/' "$out.examples"; echo ".Ed"; } >> "$out.tmp"
  fi
  rm -f "$out.examples"
  mv "$out.tmp" "$out"
  count=$((count + 1))
done
echo "installed $count man pages in $dest"
