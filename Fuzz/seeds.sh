#!/usr/bin/env bash
# Seed corpora for the fuzz harnesses, generated into OUT (an ignored build folder; never committed):
# OUT/<harness>/ from fixtures/ (and fixtures/fuzz/, the saved crash inputs), from ../shared when it is
# there, and from files made here (short simulated rooms, tiny audio files made with sox and lame).
# Usage: Fuzz/seeds.sh OUT [KTV]   (KTV: a ktv binary for `replay simulate`; skipped when missing)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$1
KTV=${2:-.build/release/ktv}
SHARED=../shared
LIMIT=262144   # seeds larger than this are left out (the harnesses run with -max_len=65536 or so)
TEXT_LIMIT=8192  # text seeds are cut to this (at a line end): a debug ASAN build parses ~10 kB/ms
rm -rf "$OUT"
mkdir -p "$OUT"/{lyrics,roundtrip,replay,pitchtrack,audio,reference,score}

# add HARNESS FILE...: copy under a content-hash name (duplicates collapse), skipping large files
add() {
    local h=$1; shift
    local f
    for f in "$@"; do
        [ -f "$f" ] || continue
        [ "$(stat -c %s "$f")" -le "$LIMIT" ] || continue
        local tmp
        tmp=$(mktemp)
        if [ "$(stat -c %s "$f")" -gt "$TEXT_LIMIT" ] && [ "$h" != audio ] && [ "$(head -c 4 "$f" | tr -d '\000')" != krc1 ] &&
            tr -d '\000' < "$f" | cmp -s - "$f"; then
            # text: its first TEXT_LIMIT bytes, up to the last line end
            head -c "$TEXT_LIMIT" "$f" | sed '$d' > "$tmp"
        else
            cp "$f" "$tmp"
        fi
        mv "$tmp" "$OUT/$h/$(sha1sum "$tmp" | cut -c1-16)"
    done
}
# add_text HARNESS: standard input as a seed
add_text() {
    local tmp
    tmp=$(mktemp)
    cat > "$tmp"
    add "$1" "$tmp"
    rm -f "$tmp"
}

# --- lyrics and roundtrip: every lyric and pitch-reference file
lyric_files() {
    find fixtures/lyrics fixtures/audio -type f ! -name '*.md' \( -name '*.krc' -o -name '*.lrc' -o -name '*.yrc' \
        -o -name '*.qrc' -o -name '*.xml' -o -name '*.pitch' -o -name '*.bin' -o -name '*.txt' \
        -o -name '*.ass' -o -name '*.vtt' -o -name '*.ttml' \)
    if [ -d "$SHARED" ]; then
        find "$SHARED/lyrics" "$SHARED/agora" -type f ! -name '*.md' ! -name 'golden-scores.json' 2>/dev/null
        find "$SHARED/scenes" -type f \( -name '*.krc' -o -name '*.lrc' -o -name 'reference.*' \) 2>/dev/null
    fi
}
while IFS= read -r f; do add lyrics "$f"; add roundtrip "$f"; done < <(lyric_files)
# The JSON model as ktv writes it
add_text lyrics <<'EOF'
{"format":"krc","tags":{"ti":"t","offset":"0"},"offset_ms":0,"applied_shift_ms":0,"lines":[{"start_ms":1000,"duration_ms":900,"text":"ab","translation":"x","words":[{"start_ms":1000,"duration_ms":400,"text":"a","romanization":"r","krc_field":1},{"start_ms":1400,"duration_ms":500,"text":"b","pitch_hz":220.5}]}]}
EOF
cp "$OUT"/lyrics/* "$OUT/roundtrip/" 2>/dev/null || true
add lyrics fixtures/fuzz/lyrics/*
add roundtrip fixtures/fuzz/roundtrip/*

# --- replay: progress logs in pieces (a whole room is far above -max_len), and scenario files
split_log() {   # split_log FILE: its first 120 lines and four 120-line pieces from the rest
    local f=$1 n
    n=$(wc -l < "$f")
    head -n 120 "$f" | add_text replay
    for k in 1 2 3 4; do
        sed -n "$((n * k / 5 + 1)),$((n * k / 5 + 120))p" "$f" | add_text replay
    done
}
split_log fixtures/replay/demo.jsonl
if [ -x "$KTV" ]; then
    tmp=$(mktemp -d)
    for base in zego agora tencent zego-faults agora-faults tencent-faults; do
        printf '{"base": "%s", "room_ms": 12000}\n' "$base" > "$tmp/$base.json"
        add replay "$tmp/$base.json"
        if "$KTV" replay simulate --scenario "$tmp/$base.json" -o "$tmp/$base.jsonl" 2>/dev/null; then
            split_log "$tmp/$base.jsonl"
        fi
    done
    rm -rf "$tmp"
fi
add_text replay <<'EOF'
{"base": "zego", "name": "my-room", "seed": 7, "room_ms": 90000, "threshold_ms": 40,
 "two_sided": false, "ntp1900": false, "announce_ms": 1000, "start_delay_ms": 2000,
 "song_ms": 240000, "start_ntp_ms": 1700000000000,
 "pauses": [{"at_ms": 30000, "duration_ms": 3000}],
 "devices": [
   {"name": "lead", "role": "lead"},
   {"name": "B", "role": "chorus", "clock_error_ms": 4.5, "rate": 0.9996, "callback_ms": 60,
    "callback_jitter_ms": 4, "net_delay_ms": 40, "net_jitter_ms": 15, "playout_delay_ms": 0,
    "join_ms": 0, "start_latency_ms": 8,
    "headphone_lags": [{"at_ms": 40000, "lag_ms": 120}],
    "callback_stalls": [{"at_ms": 50000, "duration_ms": 400}]},
   {"name": "aud1", "role": "audience", "net_delay_ms": 600, "net_jitter_ms": 150}],
 "faults": [{"kind": "missed_seek", "device": "B", "at_ms": 40000},
            {"kind": "lost_messages", "device": "B", "at_ms": 60000, "duration_ms": 3000}]}
EOF
add replay fixtures/fuzz/replay/*

# --- pitchtrack: tracks, and pairs of tracks one after the other (the harness splits its input in two)
tracks=(fixtures/audio/demo-dualmono.f0.csv)
if [ -d "$SHARED" ]; then
    while IFS= read -r f; do tracks+=("$f"); done < <(find "$SHARED/pitch" "$SHARED/scenes" -type f \
        \( -name '*.csv' -o -name '*.txt' -o -name '*.pv' \) 2>/dev/null | sort | head -n 40)
fi
for f in "${tracks[@]}"; do
    head -n 150 "$f" | add_text pitchtrack
done
for ((k = 0; k + 1 < ${#tracks[@]}; k += 2)); do
    { head -n 80 "${tracks[k]}"; head -n 80 "${tracks[k + 1]}"; } | add_text pitchtrack
done
add_text pitchtrack <<'EOF'
{"tool":"ktv pitch","hop_s":0.01,"frames":[{"time_s":0.0,"f0_hz":null,"confidence":0.1},{"time_s":0.01,"f0_hz":220.5,"confidence":0.9},{"time_s":0.02,"f0_hz":221,"confidence":0.8}]}
EOF
printf '# time f0\n0.00 0\n0.01 -220\n0.02\t220\n0.03 440.5\n0.00,0\n0.01,110\n0.02,0\n' | add_text pitchtrack
printf 'time_s,f0_hz,confidence\r\n0.00,0.000,0.1\r\n0.01,220.000,0.9\r\n' | add_text pitchtrack
add pitchtrack fixtures/fuzz/pitchtrack/*

# --- audio: tiny files in every container the reader meets (all under 0.5 s)
if command -v sox >/dev/null; then
    tmp=$(mktemp -d)
    # two channels, one of them a copy of the other plus a tone: what `ktv split` looks for
    sox -n -r 8000 -c 1 -b 16 "$tmp/acc.wav" synth 0.25 pinknoise vol 0.3 2>/dev/null
    sox -n -r 8000 -c 1 -b 16 "$tmp/voc.wav" synth 0.25 sine 220 vol 0.3 2>/dev/null
    sox -M "$tmp/voc.wav" "$tmp/acc.wav" "$tmp/dual.wav" remix 1,2 2 2>/dev/null || true
    add audio "$tmp/dual.wav"
    sox -n -r 8000 -c 1 -b 16 "$tmp/a.wav" synth 0.2 sine 330 2>/dev/null && add audio "$tmp/a.wav"
    sox -n -r 16000 -c 2 -e floating-point -b 32 "$tmp/f.wav" synth 0.1 sine 440 sine 445 2>/dev/null && add audio "$tmp/f.wav"
    sox -n -r 44100 -c 2 -b 24 "$tmp/s.flac" synth 0.1 sine 200 pinknoise 2>/dev/null && add audio "$tmp/s.flac"
    sox -n -r 8000 -c 1 "$tmp/m.flac" synth 0.3 sine 300 2>/dev/null && add audio "$tmp/m.flac"
    sox -n -r 22050 -c 2 "$tmp/v.ogg" synth 0.3 sine 250 pinknoise 2>/dev/null && add audio "$tmp/v.ogg"
    sox -n -r 8000 -c 1 -b 16 "$tmp/x.aiff" synth 0.1 sine 500 2>/dev/null && add audio "$tmp/x.aiff"
    sox -n -r 8000 -c 1 -b 8 -e u-law "$tmp/u.wav" synth 0.1 sine 600 2>/dev/null && add audio "$tmp/u.wav"
    # FFmpeg's containers (AAC in M4A with its index in front and at the end, Opus in WebM, an MP4
    # video's audio): the reader hands these to FFmpeg through a custom AVIOContext over the bytes.
    if command -v ffmpeg >/dev/null; then
        ff() { ffmpeg -loglevel error -y "$@" 2>/dev/null; }
        ff -i "$tmp/dual.wav" -c:a aac -b:a 32k "$tmp/a.m4a" && add audio "$tmp/a.m4a"
        ff -i "$tmp/dual.wav" -c:a aac -b:a 32k -movflags +faststart "$tmp/f.m4a" && add audio "$tmp/f.m4a"
        ff -i "$tmp/a.wav" -c:a libopus -b:a 16k "$tmp/o.webm" && add audio "$tmp/o.webm"
        ff -f lavfi -i color=c=blue:s=16x16:r=5 -i "$tmp/a.wav" -shortest -c:v mpeg4 -c:a aac "$tmp/v.mp4" && add audio "$tmp/v.mp4"
    fi
    if command -v lame >/dev/null; then
        sox -n -r 22050 -c 2 -b 16 "$tmp/l.wav" synth 0.4 sine 220 sine 221 2>/dev/null &&
            lame --quiet -b 32 "$tmp/l.wav" "$tmp/l.mp3" 2>/dev/null && add audio "$tmp/l.mp3"
    fi
    rm -rf "$tmp"
fi
add audio fixtures/fuzz/audio/*

# --- reference: UltraStar songs and MIDI files made here (every note type, a decimal BPM and GAP,
# duets, relative mode, CP1252, #VERSION 2; a tempo change, running status, .kar text and line marks)
add_text reference <<'EOF'
#TITLE:Seed
#ARTIST:ktv
#BPM:284,5
#GAP:1234,25
: 0 4 0 Hel
* 4 4 2 lo 
F 8 2 5 free
R 10 2 7 rap
G 12 2 -3 gold
- 14
: 16 4 12 world
E
EOF
printf '#TITLE:Duet\n#BPM:300\n#RELATIVE:yes\nP1\n: 0 4 0 one\n- 4 8\n: 0 4 2 two\nP2\n: 0 4 5 three\nP3\n: 20 2 9 both\nE\n' | add_text reference
printf '#VERSION:2.0.0\n#ENCODING:CP1252\n#TITLE:v2\n#BPM:120\n#GAP:500\n: 3 2 0 Caf\xe9\n' | add_text reference
# format 0, 96 ticks a quarter: tempo, lyrics (one with a line mark), note-offs both ways (0x80, and
# a note-on of velocity 0 under running status)
printf 'MThd\0\0\0\6\0\0\0\1\0\x60MTrk\0\0\0\x27\0\xff\x51\3\x07\xa1\x20\0\xff\5\3Hel\0\x90\x3c\x64\x60\x80\x3c\x40\0\xff\5\2/l\0\x90\x40\x64\x60\x40\0\0\xff\x2f\0' | add_text reference
# format 1, 100 ticks a quarter: a tempo track, a .kar words track (@ header, \ and / marks), a
# melody track with a chord under running status
printf 'MThd\0\0\0\6\0\1\0\3\0\x64MTrk\0\0\0\x0b\0\xff\x51\3\x09\x27\xc0\0\xff\x2f\0MTrk\0\0\0\x1a\0\xff\1\3@KM\x64\xff\1\4\\Twi\x64\xff\1\3/li\0\xff\x2f\0MTrk\0\0\0\x19\x64\x90\x3c\x50\0\x40\x50\x64\x80\x3c\0\0\x40\0\x64\x90\x43\x50\x64\x43\0\0\xff\x2f\0' | add_text reference
# Every other reference format: notes JSON (a list; an object with lines, a beat and a relative
# scale), a pitch track segmented into notes, Migu XML tones, Agora pitch, and the shared scenes'
# references when they are there.
add reference fixtures/lyrics/migu.xml fixtures/lyrics/agora-pitch-notes.pitch fixtures/lyrics/agora-pitch-contour.bin
# MusicXML (ties, a tempo change, transposing parts, repeats with endings) and .mxl archives (with
# and without META-INF/container.xml, and one that unpacks to 2 MiB).
add reference fixtures/musicxml/*.musicxml fixtures/musicxml/*.mxl
[ -d "$SHARED/scenes" ] && add reference $(find "$SHARED/scenes" -name 'reference.*' | sort | head -n 4)
printf '[{"start_ms":1000,"duration_ms":400,"midi":60,"word":"a"},{"start_ms":1500,"duration_ms":400,"midi":62.5,"word":"b"},{"start_ms":2000,"duration_ms":0,"midi":null}]\n' | add_text reference
printf '\xef\xbb\xbf{"notes":[{"start_ms":0,"duration_ms":300,"midi":64,"word":"x","line":0,"kind":"golden"},{"start_ms":400,"duration_ms":300,"midi":65,"line":1,"kind":"rap"}],"lines":[{"start_ms":0,"end_ms":300,"text":"x"},{"start_ms":400,"end_ms":700,"text":"y"}],"beat_ms":125.5,"scale":"relative"}\n' | add_text reference
printf 'time_s,f0_hz\n0.00,0\n0.01,220\n0.02,220\n0.03,220\n0.04,220\n0.05,220\n0.06,220\n0.07,221\n0.08,247\n0.09,247\n0.10,247\n0.11,247\n0.12,247\n0.13,247\n0.14,247\n0.15,0\n' | add_text reference
# What issue 19 found: times near Int.max and past 24 h, a tone ending before it begins, a tone
# whose end is not a time, a pitch of 1e308 Hz, a line ending before it starts, nesting 2,000 deep.
printf '[{"start_ms":1000,"duration_ms":9223372036854775807,"midi":60}]' | add_text reference
printf '[{"start_ms":9223372036854775000,"duration_ms":100,"midi":60}]' | add_text reference
printf 'time_s,f0_hz\n0.0,440\n0.01,440\n1e308,440\n' | add_text reference
printf '<?xml version="1.0"?><song><midi_lrc><paragraph><sentence><tone begin="1.0" end="1.5" pitch="220"><word>a</word></tone><tone begin="2.0" end="1.8" pitch="1e308"><word>b</word></tone><tone begin="3" end="bei" pitch="196"><word>c</word></tone></sentence></paragraph></midi_lrc></song>\n' | add_text reference
printf '{"notes":[{"start_ms":0,"duration_ms":300,"midi":64,"line":0}],"lines":[{"start_ms":5000,"end_ms":1000,"text":"x"}]}' | add_text reference
{ printf '<?xml version="1.0"?>'; for _ in $(seq 2000); do printf '<a>'; done; for _ in $(seq 2000); do printf '</a>'; done; } | add_text reference
add reference fixtures/fuzz/reference/*

# --- score: reference, take and progress log in one input, parts separated by a line `%%`
# (Fuzz/Sources/FuzzTargets/ScoreTarget.swift); a missing or unreadable part is replaced there.
notes='[{"start_ms":1000,"duration_ms":400,"midi":60},{"start_ms":1500,"duration_ms":400,"midi":62},{"start_ms":2000,"duration_ms":800,"midi":64}]'
take='time_s,f0_hz
0.90,0
1.00,262
1.20,262
1.50,294
1.80,294
2.00,330
2.50,331
2.90,0'
log='{"device":"B","at":0,"ntp":1,"kind":"record","action":"start"}
{"device":"B","at":10,"ntp":11,"kind":"progress","position":0,"state":"playing"}
{"device":"B","at":1200,"ntp":1201,"kind":"progress","position":1190,"state":"playing"}
{"device":"B","at":1300,"ntp":1301,"kind":"seek","to":900}
{"device":"B","at":2000,"ntp":2001,"kind":"progress","position":1590,"state":"playing"}
{"device":"B","at":2100,"ntp":2101,"kind":"pause"}'
printf '%s\n%%%%\n%s\n%%%%\n%s\n' "$notes" "$take" "$log" | add_text score
printf '%s\n%%%%\n%s\n' "$notes" "$take" | add_text score
printf '%s\n%%%%\n262\n262\n0\n294\n330\n330\n' "$notes" | add_text score
add score fixtures/lyrics/migu.xml
printf '%%%%\n%s\n1e300,440\n' "$take" | add_text score
# A log whose position steps back a little, many times (issue 19)
{ printf '%s\n%%%%\n%s\n%%%%\n' "$notes" "$take"; printf '{"device":"B","at":0,"ntp":1,"kind":"record","action":"start"}\n';
  for k in $(seq 200); do printf '{"device":"B","at":%d,"ntp":%d,"kind":"progress","position":%d,"state":"playing"}\n' $((k*40)) $((k*40+1)) $((5000-k*10)); done; } | add_text score
add score fixtures/fuzz/score/*

for h in lyrics roundtrip replay pitchtrack audio reference score; do
    printf '%s %s' "$h" "$(ls "$OUT/$h" | wc -l)"
    [ "$h" = score ] && echo || printf ', '
done | sed 's/^/seeds: /; s/, $//'
