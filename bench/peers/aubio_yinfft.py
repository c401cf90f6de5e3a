"""aubio's yinfft (Brossier) on a mono WAV, 10 ms hop: writes time_s,f0_hz (0 = unvoiced).

A peer for `make bench`. Times are the centre of the window aubio analysed: block i holds the
buf_size samples ending at (i + 1) * hop (see shared/pitch/PEERS.md on time conventions).
"""
import sys
import aubio
import numpy as np
import soundfile as sf

path, out = sys.argv[1], sys.argv[2]
x, sr = sf.read(path, dtype="float32", always_2d=True)
x = np.ascontiguousarray(x.mean(axis=1))
hop = int(round(sr * 0.01))
win = 2048
p = aubio.pitch("yinfft", win, hop, sr)
p.set_unit("Hz")
p.set_tolerance(0.85)
n = len(x) // hop
f0 = np.zeros(n)
for i in range(n):
    f0[i] = p(x[i * hop:(i + 1) * hop])[0]
t = ((np.arange(n) + 1) * hop - win / 2) / sr
keep = t >= 0  # the first blocks are centred before the file starts
np.savetxt(out, np.c_[t[keep], f0[keep]], fmt="%.4f", delimiter=",")
