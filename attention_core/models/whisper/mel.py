"""Whisper's input: the log-mel spectrogram of 30 s of 16 kHz audio, in NumPy.

The same numbers as transformers' ``WhisperFeatureExtractor(feature_size=80)`` (to 1e-5): the
samples are cut or zero-padded to 30 s, reflect-padded by half a window at each end, cut into
400-sample frames every 160 samples (10 ms) under a periodic Hann window, turned into power spectra,
summed by 80 Slaney-style mel filters up to 8 kHz, and taken as log10, floored at 8 below the
loudest value, then mapped by (x + 4) / 4. The last of the 3001 frames is dropped, as Whisper does.
Shape suffixes: ``n`` samples, ``f`` mel bins (frequency), ``t`` spectrogram frames (time).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]

SAMPLE_RATE = 16_000  # Whisper hears 16 kHz audio
N_SAMPLES = 480_000  # one 30 s window
N_FFT = 400  # 25 ms frames
HOP = 160  # 10 ms between frames
N_FRAMES = N_SAMPLES // HOP  # 3000 spectrogram frames (the encoder halves them to 1500)
N_MELS = 80


def hertz_to_mel(hertz_n: F64) -> F64:
    """Slaney's mel scale: linear below 1 kHz (3 mels per 200 Hz), logarithmic above."""
    mel_n = 3.0 * hertz_n / 200.0
    log_region = hertz_n >= 1000.0
    mel_n[log_region] = 15.0 + np.log(hertz_n[log_region] / 1000.0) * (27.0 / np.log(6.4))
    return mel_n


def mel_to_hertz(mel_n: F64) -> F64:
    """The inverse of `hertz_to_mel`."""
    hertz_n = 200.0 * mel_n / 3.0
    log_region = mel_n >= 15.0
    hertz_n[log_region] = 1000.0 * np.exp((np.log(6.4) / 27.0) * (mel_n[log_region] - 15.0))
    return hertz_n


def mel_filters(n_mels: int = N_MELS, n_fft: int = N_FFT, sample_rate: int = SAMPLE_RATE) -> F64:
    """Triangular mel filters, [n_fft // 2 + 1 frequency bins, n_mels], area-normalised (Slaney).

    Filter m rises from centre m - 1 to centre m and falls to centre m + 1, with the n_mels + 2
    centres evenly spaced in mels from 0 Hz to the Nyquist frequency; each filter is scaled by
    2 / its width in hertz so that every filter carries the same energy.
    """
    fft_hz = np.linspace(0.0, sample_rate / 2, n_fft // 2 + 1)
    edges_mel = np.linspace(0.0, hertz_to_mel(np.array([sample_rate / 2]))[0], n_mels + 2)
    edges_hz = mel_to_hertz(edges_mel)
    width_hz = np.diff(edges_hz)
    offset = edges_hz[None, :] - fft_hz[:, None]  # [bins, n_mels + 2]
    rising = -offset[:, :-2] / width_hz[:-1]
    falling = offset[:, 2:] / width_hz[1:]
    filters = np.maximum(0.0, np.minimum(rising, falling))
    return filters * (2.0 / (edges_hz[2:] - edges_hz[:-2]))


_FILTERS_FB = mel_filters().T.copy()  # [n_mels, bins], computed once at import
_WINDOW = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(N_FFT) / N_FFT)  # periodic Hann


def fit_window(samples_n: npt.ArrayLike) -> F64:
    """The samples cut or zero-padded to exactly one 30 s window (N_SAMPLES), as float64."""
    samples = np.asarray(samples_n, dtype=np.float32).reshape(-1)[:N_SAMPLES]
    window = np.zeros(N_SAMPLES, dtype=np.float64)
    window[: samples.size] = samples
    return window


def power_spectrogram(window_n: F64) -> F64:
    """|STFT|² of one 30 s window, [bins, N_FRAMES]: reflect-padded, Hann, hop 160."""
    padded = np.pad(window_n, N_FFT // 2, mode="reflect")
    frames_tn = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP][:N_FRAMES]
    spectrum = np.fft.rfft(frames_tn * _WINDOW, axis=1)
    return (spectrum.real**2 + spectrum.imag**2).T


def log_mel(samples_n: npt.ArrayLike) -> F32:
    """Whisper's log-mel input, float32 [80, 3000], from mono 16 kHz samples.

    Longer input is cut to its first 30 s and shorter input padded with silence, as
    WhisperFeatureExtractor does. Values lie in [(max - 8 + 4) / 4, (max + 4) / 4].
    """
    mel_ft = _FILTERS_FB @ power_spectrogram(fit_window(samples_n))
    log_ft = np.log10(np.maximum(mel_ft, 1e-10))
    log_ft = np.maximum(log_ft, log_ft.max() - 8.0)
    return ((log_ft + 4.0) / 4.0).astype(np.float32)
