package stt

import (
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// Whisper's audio front end: 16 kHz mono in windows of 30 s, a 400-point short-time Fourier
// transform every 160 samples (10 ms), a Slaney mel filter bank and a clamped log scale.
const (
	// SampleRate is the rate Whisper reads; [Decode] resamples to it.
	SampleRate = 16000
	nFFT       = 400
	hop        = 160
	// ChunkSamples is the length of one model input: 30 s.
	ChunkSamples = 30 * SampleRate
	// Frames is the number of feature frames of one chunk.
	Frames = ChunkSamples / hop
)

// melFilters returns Whisper's (librosa's) mel filter bank for nFFT at SampleRate: nMels
// triangular filters between 0 Hz and the Nyquist frequency, on the Slaney mel scale (linear
// below 1 kHz, logarithmic above) and area-normalised (each filter scaled by 2 / its width in
// Hz), as a [nMels][nFFT/2+1] matrix.
func melFilters(nMels int) [][]float64 {
	const (
		fSp      = 200.0 / 3 // Hz per mel below 1 kHz
		minLogHz = 1000.0
	)
	minLogMel := minLogHz / fSp
	logStep := math.Log(6.4) / 27
	toMel := func(hz float64) float64 {
		if hz < minLogHz {
			return hz / fSp
		}
		return minLogMel + math.Log(hz/minLogHz)/logStep
	}
	toHz := func(mel float64) float64 {
		if mel < minLogMel {
			return mel * fSp
		}
		return minLogHz * math.Exp(logStep*(mel-minLogMel))
	}
	bins := nFFT/2 + 1
	fft := make([]float64, bins) // the frequency of each FFT bin
	for i := range fft {
		fft[i] = float64(i) * SampleRate / nFFT
	}
	top := toMel(SampleRate / 2)
	pts := make([]float64, nMels+2) // filter edges in Hz, evenly spaced in mel
	for i := range pts {
		pts[i] = toHz(top * float64(i) / float64(nMels+1))
	}
	w := make([][]float64, nMels)
	for m := range w {
		w[m] = make([]float64, bins)
		lo, mid, hi := pts[m], pts[m+1], pts[m+2]
		norm := 2 / (hi - lo)
		for k, f := range fft {
			v := min((f-lo)/(mid-lo), (hi-f)/(hi-mid))
			if v > 0 {
				w[m][k] = v * norm
			}
		}
	}
	return w
}

// hann returns the periodic Hann window of n points (torch.hann_window's default).
func hann(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n))
	}
	return w
}

// melFrontEnd computes the log-mel features of chunks; it keeps the filters, window and FFT
// plan between calls and is not safe for concurrent use.
type melFrontEnd struct {
	nMels   int
	filters [][]float64
	window  []float64
	fft     *fourier.FFT
	frame   []float64
	coeff   []complex128
	power   []float64
}

func newMelFrontEnd(nMels int) *melFrontEnd {
	return &melFrontEnd{
		nMels: nMels, filters: melFilters(nMels), window: hann(nFFT), fft: fourier.NewFFT(nFFT),
		frame: make([]float64, nFFT), coeff: make([]complex128, nFFT/2+1), power: make([]float64, nFFT/2+1),
	}
}

// LogMel returns the features of one chunk as the model reads them, [nMels][Frames] flattened
// row by row: samples (16 kHz, in [-1, 1]) are padded with silence or cut to 30 s; each frame
// is centred on its hop (the signal reflected at both ends), windowed, transformed; the power
// spectrum goes through the filters, then log10 (floored at 1e-10), is clamped to 8 below the
// chunk's maximum and scaled as (x + 4) / 4. This is what Whisper's log_mel_spectrogram and
// Hugging Face's WhisperFeatureExtractor compute.
func LogMel(samples []float32, nMels int) []float32 {
	return newMelFrontEnd(nMels).logMel(samples)
}

func (m *melFrontEnd) logMel(samples []float32) []float32 {
	n := min(len(samples), ChunkSamples)
	x := make([]float64, ChunkSamples) // the chunk, padded with zeros
	for i := range n {
		x[i] = float64(samples[i])
	}
	at := func(i int) float64 { // x reflected at both ends (numpy's "reflect" padding)
		if i < 0 {
			i = -i
		}
		if i >= ChunkSamples {
			i = 2*(ChunkSamples-1) - i
		}
		return x[i]
	}
	out := make([]float64, m.nMels*Frames)
	// Frames whose window lies in the zero padding all have zero power: computed once.
	var silent []float64
	for t := range Frames {
		start := t*hop - nFFT/2
		if start > n && start+nFFT < ChunkSamples {
			if silent == nil {
				silent = m.melsOf(nil)
			}
			for k, v := range silent {
				out[k*Frames+t] = v
			}
			continue
		}
		for i := range nFFT {
			m.frame[i] = at(start+i) * m.window[i]
		}
		for k, v := range m.melsOf(m.frame) {
			out[k*Frames+t] = v
		}
	}
	top := math.Inf(-1)
	for _, v := range out {
		top = max(top, v)
	}
	res := make([]float32, len(out))
	for i, v := range out {
		res[i] = float32((max(v, top-8) + 4) / 4)
	}
	return res
}

// melsOf returns log10 of the mel energies of one windowed frame (nil: a silent one).
func (m *melFrontEnd) melsOf(frame []float64) []float64 {
	if frame == nil {
		clear(m.power)
	} else {
		m.fft.Coefficients(m.coeff, frame)
		for k, c := range m.coeff {
			m.power[k] = real(c)*real(c) + imag(c)*imag(c)
		}
	}
	mels := make([]float64, m.nMels)
	for k, f := range m.filters {
		var e float64
		for j, w := range f {
			e += w * m.power[j]
		}
		mels[k] = math.Log10(max(e, 1e-10))
	}
	return mels
}
