// Package loudness measures loudness as ITU-R BS.1770-4 defines it and EBU
// R128 uses it (Tech 3341 for the meter, Tech 3342 for the loudness range):
// K-weighting, 400 ms blocks every 100 ms, the absolute (−70 LUFS) and
// relative (−10 LU) gates, the loudness range of 3 s windows, and the true
// peak of a 4× oversampled signal.
//
// It was written from the standards' text alone; no other implementation's
// code was used. The only numbers taken over are the standards' own (the
// 48 kHz K-weighting coefficients, the gates, the channel weights). The
// filters for other sample rates are derived from those coefficients
// (kweight.go), and the true-peak interpolator is our own design
// (truepeak.go).
//
// A track's blocks are kept as a histogram (histogram.go), so that a
// folder's integrated loudness is gated over all its tracks' blocks
// (Combine) from stored results, without decoding again.
package loudness
