"""librosa's pYIN (Mauch & Dixon 2014) on a mono WAV, 10 ms hop: writes time_s,f0_hz (0 = unvoiced).

A peer for `make bench`. librosa centres its frames: frame i is at i * hop.
"""
import sys
import librosa
import numpy as np
import soundfile as sf

path, out = sys.argv[1], sys.argv[2]
x, sr = sf.read(path, dtype="float32", always_2d=True)
x = x.mean(axis=1)
hop = int(round(sr * 0.01))
f0, voiced, _ = librosa.pyin(x, fmin=60, fmax=1100, sr=sr, frame_length=2048, hop_length=hop)
f0 = np.where(voiced, np.nan_to_num(f0), 0.0)
t = np.arange(len(f0)) * hop / sr
np.savetxt(out, np.c_[t, f0], fmt="%.4f", delimiter=",")
