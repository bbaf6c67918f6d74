package mp3

// Tables of ISO/IEC 11172-3 and 13818-3 that are data rather than formulas;
// the synthesis window's is in tableb3.go.

// Layer III bit rates in kbit/s by bitrate_index (11172-3 2.4.2.3):
// MPEG-1, and MPEG-2/2.5 (lower sampling frequencies, "LSF", 13818-3
// 2.4.2.3). Index 0 is the free format, 15 is forbidden; neither is
// decoded.
var bitrates = [2][16]int{
	{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0},
	{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0},
}

// Sampling frequencies by rate index: MPEG-1 (11172-3 2.4.2.3), MPEG-2
// (13818-3 2.4.2.3) and MPEG-2.5 (half MPEG-2's, as mpg123 has them),
// three each.
var sampleRates = [9]int{44100, 48000, 32000, 22050, 24000, 16000, 11025, 12000, 8000}

// Scalefactor band boundaries (in frequency lines) by rate index, long
// blocks (22 bands) and short blocks (13 bands, lines per window):
// 11172-3 Table 3-B.8 for MPEG-1, 13818-3 Table B.2 for MPEG-2; the
// MPEG-2.5 rows are mpg123's (no standard has them). The 24 kHz table has
// 332, as the corrected tables and every decoder in use.
var sfbLong = [9][23]int{
	{0, 4, 8, 12, 16, 20, 24, 30, 36, 44, 52, 62, 74, 90, 110, 134, 162, 196, 238, 288, 342, 418, 576},
	{0, 4, 8, 12, 16, 20, 24, 30, 36, 42, 50, 60, 72, 88, 106, 128, 156, 190, 230, 276, 330, 384, 576},
	{0, 4, 8, 12, 16, 20, 24, 30, 36, 44, 54, 66, 82, 102, 126, 156, 194, 240, 296, 364, 448, 550, 576},
	{0, 6, 12, 18, 24, 30, 36, 44, 54, 66, 80, 96, 116, 140, 168, 200, 238, 284, 336, 396, 464, 522, 576},
	{0, 6, 12, 18, 24, 30, 36, 44, 54, 66, 80, 96, 114, 136, 162, 194, 232, 278, 332, 394, 464, 540, 576},
	{0, 6, 12, 18, 24, 30, 36, 44, 54, 66, 80, 96, 116, 140, 168, 200, 238, 284, 336, 396, 464, 522, 576},
	{0, 6, 12, 18, 24, 30, 36, 44, 54, 66, 80, 96, 116, 140, 168, 200, 238, 284, 336, 396, 464, 522, 576},
	{0, 6, 12, 18, 24, 30, 36, 44, 54, 66, 80, 96, 116, 140, 168, 200, 238, 284, 336, 396, 464, 522, 576},
	{0, 12, 24, 36, 48, 60, 72, 88, 108, 132, 160, 192, 232, 280, 336, 400, 476, 566, 568, 570, 572, 574, 576},
}

var sfbShort = [9][14]int{
	{0, 4, 8, 12, 16, 22, 30, 40, 52, 66, 84, 106, 136, 192},
	{0, 4, 8, 12, 16, 22, 28, 38, 50, 64, 80, 100, 126, 192},
	{0, 4, 8, 12, 16, 22, 30, 42, 58, 78, 104, 138, 180, 192},
	{0, 4, 8, 12, 18, 24, 32, 42, 56, 74, 100, 132, 174, 192},
	{0, 4, 8, 12, 18, 26, 36, 48, 62, 80, 104, 136, 180, 192},
	{0, 4, 8, 12, 18, 26, 36, 48, 62, 80, 104, 134, 174, 192},
	{0, 4, 8, 12, 18, 26, 36, 48, 62, 80, 104, 134, 174, 192},
	{0, 4, 8, 12, 18, 26, 36, 48, 62, 80, 104, 134, 174, 192},
	{0, 8, 16, 24, 36, 52, 72, 96, 124, 160, 162, 164, 166, 192},
}

// pretab is added to the long-block scalefactors when preflag is set
// (Table 3-B.6, Layer III preemphasis).
var pretab = [22]int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 3, 2, 0}

// MPEG-1 scalefactor bit lengths by scalefac_compress (2.4.2.7).
var slen1 = [16]int{0, 0, 0, 0, 3, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4}
var slen2 = [16]int{0, 1, 2, 3, 0, 1, 2, 3, 1, 2, 3, 1, 2, 3, 2, 3}

// MPEG-2 numbers of scalefactors in each of the four slen groups
// (ISO/IEC 13818-3 Table B.1 "nr_of_sfb_block"), by the partition the
// scalefac_compress value selects and by block: long, short, mixed.
var nrOfSfb = [6][3][4]int{
	{{6, 5, 5, 5}, {9, 9, 9, 9}, {6, 9, 9, 9}},
	{{6, 5, 7, 3}, {9, 9, 12, 6}, {6, 9, 12, 6}},
	{{11, 10, 0, 0}, {18, 18, 0, 0}, {15, 18, 0, 0}},
	{{7, 7, 7, 0}, {12, 12, 12, 0}, {6, 15, 12, 0}},
	{{6, 6, 6, 3}, {12, 9, 9, 6}, {6, 12, 9, 6}},
	{{8, 8, 5, 0}, {15, 12, 9, 0}, {6, 18, 9, 0}},
}

// Alias reduction coefficients c_i (Table 3-B.9).
var aliasCoefficients = [8]float64{-0.6, -0.535, -0.33, -0.185, -0.095, -0.041, -0.0142, -0.0037}
