#!/usr/bin/env python3
"""Generate a batch of karaoke takes for the Spark demo (Python standard library only).

    python3 make_takes.py OUT_DIR [--takes 200] [--seed 12]

Writes into OUT_DIR:

- refs/song-K.notes.json: a few reference melodies as ktv notes JSON
  ({"notes": [{"start_ms", "duration_ms", "midi"}, ...]});
- takes/take-NNNN.f0.csv: N pitch tracks (`time_s,f0_hz`, one row every 10 ms, 0 Hz = unvoiced) singing
  those melodies with seeded errors: detuning (a constant offset plus drift, vibrato and jitter),
  early/late onsets, octave slips, a take sung in another key, forgotten notes. The first take of
  every song (id `perfect-K`) is sung exactly;
- a handful of deliberately bad rows, so the results show error lines: a take file that does not
  exist (`bad-missing`), a take of random bytes (`bad-corrupt`), an empty take (`bad-empty`) and a
  row with an unknown rule set (`bad-rules`, rules: karaoke);
- manifest.jsonl: one JSON object per line, ABSOLUTE paths. JSON Lines, not CSV, because Spark hands
  each partition's `ktv batch -` process a slice of the lines and a CSV header would only reach the
  first slice. Absolute paths because a piped manifest's relative paths are taken from the
  executor's current folder.

Most takes use ktv's rules; every 5th uses Agora's and every 7th UltraStar's, so the report can
group scores by rule set. The same seed gives the same files.
"""

import argparse
import json
import math
import os
import random

HOP_S = 0.010
BAD_ROWS = {"bad-missing": "missing", "bad-corrupt": "audio", "bad-empty": "take", "bad-rules": "row"}


def melody(rng, start_ms=1000):
    """A singable melody: 10-16 notes in a ninth around middle C, mostly steps, short rests."""
    notes, t, midi = [], start_ms, rng.choice([57, 60, 62, 64])
    for _ in range(rng.randint(10, 16)):
        midi = min(72, max(52, midi + rng.choice([-4, -2, -2, -1, 0, 1, 2, 2, 3, 5])))
        duration = rng.choice([250, 300, 400, 500, 600, 800])
        notes.append({"start_ms": t, "duration_ms": duration, "midi": midi})
        t += duration + rng.choice([0, 0, 50, 100, 250])
    return notes


def hz(midi_cents):
    return 440.0 * 2.0 ** ((midi_cents / 100.0 - 69.0) / 12.0)


def sing(rng, notes, errors):
    """The pitch track of a singer: one f0 per 10 ms frame on the song's clock (0 = silence)."""
    end_s = (notes[-1]["start_ms"] + notes[-1]["duration_ms"]) / 1000.0 + 0.5
    frames = [0.0] * (int(end_s / HOP_S) + 1)
    for n in notes:
        if rng.random() < errors["forget"]:
            continue
        shift = rng.gauss(0.0, errors["timing_ms"]) / 1000.0
        start = n["start_ms"] / 1000.0 + shift
        stop = (n["start_ms"] + n["duration_ms"]) / 1000.0 + shift - 0.02  # a breath before the next
        octave = 1200.0 * rng.choice([-1, 1]) if rng.random() < errors["octave"] else 0.0
        for k in range(max(0, int(math.ceil(start / HOP_S))), min(len(frames), int(stop / HOP_S) + 1)):
            t = k * HOP_S
            cents = (n["midi"] * 100.0 + errors["key_cents"] + errors["detune_cents"] + octave
                     + errors["drift_cents_per_s"] * t
                     + errors["vibrato_cents"] * math.sin(2.0 * math.pi * 5.5 * t)
                     + rng.gauss(0.0, errors["jitter_cents"]))
            frames[k] = hz(cents)
    return frames


def errors_for(rng, perfect):
    if perfect:
        return dict(forget=0.0, timing_ms=0.0, octave=0.0, key_cents=0.0, detune_cents=0.0,
                    drift_cents_per_s=0.0, vibrato_cents=0.0, jitter_cents=0.0)
    return dict(
        forget=rng.choice([0.0, 0.0, 0.0, 0.1, 0.3]),
        timing_ms=rng.choice([0.0, 20.0, 60.0, 120.0]),
        octave=rng.choice([0.0, 0.0, 0.0, 0.15]),
        key_cents=rng.choice([0.0] * 6 + [-500.0, 300.0, 700.0]),
        detune_cents=rng.uniform(-80.0, 80.0),
        drift_cents_per_s=rng.uniform(-6.0, 6.0),
        vibrato_cents=rng.choice([0.0, 20.0, 40.0]),
        jitter_cents=rng.choice([3.0, 10.0, 25.0]),
    )


def write_track(path, frames):
    with open(path, "w", encoding="utf-8") as f:
        f.write("time_s,f0_hz\n")
        for k, f0 in enumerate(frames):
            f.write(f"{k * HOP_S:.2f},{f0:.2f}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--takes", type=int, default=200, help="good takes to generate (default 200)")
    ap.add_argument("--songs", type=int, default=3, help="reference melodies (default 3)")
    ap.add_argument("--seed", type=int, default=12)
    args = ap.parse_args()
    if args.takes < args.songs:
        ap.error("--takes must be at least --songs (the first take of every song is the perfect one)")

    rng = random.Random(args.seed)
    out = os.path.abspath(args.out_dir)
    os.makedirs(os.path.join(out, "refs"), exist_ok=True)
    os.makedirs(os.path.join(out, "takes"), exist_ok=True)

    songs = []
    for s in range(args.songs):
        notes = melody(rng)
        path = os.path.join(out, "refs", f"song-{s}.notes.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"notes": notes}, f, indent=1)
        songs.append((path, notes))

    rows = []
    for i in range(args.takes):
        s = i % args.songs
        perfect = i < args.songs
        take_id = f"perfect-{s}" if perfect else f"take-{i:04d}"
        path = os.path.join(out, "takes", f"take-{i:04d}.f0.csv")
        write_track(path, sing(rng, songs[s][1], errors_for(rng, perfect)))
        row = {"id": take_id, "take": path, "reference": songs[s][0]}
        if not perfect and i % 5 == 0:
            row["rules"] = "agora"
        elif not perfect and i % 7 == 0:
            row["rules"] = "ultrastar"
        rows.append(row)

    ref0 = songs[0][0]
    corrupt = os.path.join(out, "takes", "bad-corrupt.f0.csv")
    with open(corrupt, "wb") as f:
        f.write(bytes([0]) + rng.randbytes(4095))  # a NUL byte: binary, not text
    empty = os.path.join(out, "takes", "bad-empty.f0.csv")
    open(empty, "w").close()
    rows += [
        {"id": "bad-missing", "take": os.path.join(out, "takes", "no-such-take.f0.csv"), "reference": ref0},
        {"id": "bad-corrupt", "take": corrupt, "reference": ref0},
        {"id": "bad-empty", "take": empty, "reference": ref0},
        {"id": "bad-rules", "take": rows[0]["take"], "reference": ref0, "rules": "karaoke"},
    ]

    manifest = os.path.join(out, "manifest.jsonl")
    with open(manifest, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    print(f"make_takes: {args.songs} songs, {args.takes} takes + {len(BAD_ROWS)} bad rows "
          f"({', '.join(BAD_ROWS)}) -> {manifest}")


if __name__ == "__main__":
    main()
