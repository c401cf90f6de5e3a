#!/bin/sh
# `make dist`: ktv with the Swift runtime linked in (--static-swift-stdlib), stripped, with its man
# pages and a DEPENDENCIES file naming the Debian packages of the system libraries it links, as
# .build/dist/ktv-VERSION-linux-ARCH.tar.gz. It runs where those packages are and Swift is not.
# Usage: Tools/dist.sh SWIFT
set -eu
swift=${1:-swift}
version=$(sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/ktv/KTV.swift)
arch=$(uname -m)
name=ktv-$version-linux-$arch
stage=.build/dist/stage/$name
"$swift" build -c release --product ktv --static-swift-stdlib --build-path .build-dist
rm -rf .build/dist/stage && mkdir -p "$stage/bin" "$stage/share/man/man1"
cp .build-dist/release/ktv "$stage/bin/ktv"
strip "$stage/bin/ktv"
if ldd "$stage/bin/ktv" | grep -i swift; then echo "dist: the binary still links a Swift library" >&2; exit 1; fi
# The man pages: generated from the command definitions when they are not there yet.
[ -d .build/plugins/GenerateManual/outputs/ktv ] || "$swift" package plugin generate-manual --multi-page
Tools/install-man.sh .build/plugins/GenerateManual/outputs/ktv "$stage/share/man/man1" "$stage/bin/ktv" >/dev/null
# The Debian packages of the shared libraries the binary names (NEEDED; apt brings what they load in
# turn), the C and C++ runtimes every Debian system has left out.
{
  echo "# Debian packages ktv $version needs at run time (apt-get install them; no Swift toolchain needed):"
  readelf -d "$stage/bin/ktv" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | while read -r soname; do
    path=$(ldd "$stage/bin/ktv" | awk -v s="$soname" '$1 == s && $3 ~ /^\// { print $3 }')
    [ -n "$path" ] || continue
    # dpkg knows a library by the path its package installed (/lib or /usr/lib, link or file).
    real=$(readlink -f "$path")
    { dpkg -S "$path" || dpkg -S "$real" || dpkg -S "/usr$real" || dpkg -S "${real#/usr}"; } 2>/dev/null | head -n 1 | cut -d: -f1 || true
  done | sort -u | grep -v -E '^(libc6|libgcc-s1|libstdc\+\+6)$' | sed 's/^/  /'
  # FFmpeg's libraries and libzip are loaded when a file needs them (MP4/M4A, WebM, video, .mxl), not NEEDED: named
  # by the sonames the binary opens.
  echo "# and, to read MP4/M4A, WebM, video and compressed MusicXML (loaded only when such a file is read):"
  strings "$stage/bin/ktv" | grep -E '^lib(avutil|swresample|avcodec|avformat|zip)\.so\.[0-9]+$' | sort -u | while read -r soname; do
    # By name, wherever the package put it (/usr/lib or /lib: dpkg knows one of the two).
    dpkg -S "*/$soname" 2>/dev/null | head -n 1 | cut -d: -f1 || true
  done | sort -u | sed 's/^/  /'
} > "$stage/DEPENDENCIES"
cp README.md "$stage/README.md"
tar -czf ".build/dist/$name.tar.gz" -C .build/dist/stage "$name"
echo "dist: .build/dist/$name.tar.gz ($(du -h ".build/dist/$name.tar.gz" | cut -f1)); needs:"
grep -v '^# Debian' "$stage/DEPENDENCIES"
