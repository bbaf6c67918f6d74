package flac

// Code generated for orders 1 to 12 (the reference encoder's -0 to -8 use
// up to 12): the predictor written out per order, coefficients in
// registers, one bounds check per sample. DO NOT EDIT by hand; regenerate
// with the script in the commit that made it.

// lpcUnrolled undoes an LPC predictor of order 1 to 12; false for others.
func lpcUnrolled[T sample](out []T, coef []int64, shift uint) bool {
	switch len(coef) {
	case 1:
		lpc1(out, coef, shift)
	case 2:
		lpc2(out, coef, shift)
	case 3:
		lpc3(out, coef, shift)
	case 4:
		lpc4(out, coef, shift)
	case 5:
		lpc5(out, coef, shift)
	case 6:
		lpc6(out, coef, shift)
	case 7:
		lpc7(out, coef, shift)
	case 8:
		lpc8(out, coef, shift)
	case 9:
		lpc9(out, coef, shift)
	case 10:
		lpc10(out, coef, shift)
	case 11:
		lpc11(out, coef, shift)
	case 12:
		lpc12(out, coef, shift)
	default:
		return false
	}
	return true
}

func lpc1[T sample](out []T, coef []int64, shift uint) {
	c0 := coef[0]
	for i := 1; i < len(out); i++ {
		w := out[i-1 : i+1 : i+1]
		s := c0 * int64(w[0])
		w[1] += T(s >> shift)
	}
}

func lpc2[T sample](out []T, coef []int64, shift uint) {
	c0, c1 := coef[0], coef[1]
	for i := 2; i < len(out); i++ {
		w := out[i-2 : i+1 : i+1]
		s := c0*int64(w[1]) + c1*int64(w[0])
		w[2] += T(s >> shift)
	}
}

func lpc3[T sample](out []T, coef []int64, shift uint) {
	c0, c1, c2 := coef[0], coef[1], coef[2]
	for i := 3; i < len(out); i++ {
		w := out[i-3 : i+1 : i+1]
		s := c0*int64(w[2]) + c1*int64(w[1]) + c2*int64(w[0])
		w[3] += T(s >> shift)
	}
}

func lpc4[T sample](out []T, coef []int64, shift uint) {
	c0, c1, c2, c3 := coef[0], coef[1], coef[2], coef[3]
	for i := 4; i < len(out); i++ {
		w := out[i-4 : i+1 : i+1]
		s := c0*int64(w[3]) + c1*int64(w[2]) + c2*int64(w[1]) + c3*int64(w[0])
		w[4] += T(s >> shift)
	}
}

func lpc5[T sample](out []T, coef []int64, shift uint) {
	c0, c1, c2, c3, c4 := coef[0], coef[1], coef[2], coef[3], coef[4]
	for i := 5; i < len(out); i++ {
		w := out[i-5 : i+1 : i+1]
		s := c0*int64(w[4]) + c1*int64(w[3]) + c2*int64(w[2]) + c3*int64(w[1]) + c4*int64(w[0])
		w[5] += T(s >> shift)
	}
}

func lpc6[T sample](out []T, coef []int64, shift uint) {
	c0, c1, c2, c3, c4, c5 := coef[0], coef[1], coef[2], coef[3], coef[4], coef[5]
	for i := 6; i < len(out); i++ {
		w := out[i-6 : i+1 : i+1]
		s := c0*int64(w[5]) + c1*int64(w[4]) + c2*int64(w[3]) + c3*int64(w[2]) + c4*int64(w[1]) + c5*int64(w[0])
		w[6] += T(s >> shift)
	}
}

func lpc7[T sample](out []T, coef []int64, shift uint) {
	c0, c1, c2, c3, c4, c5, c6 := coef[0], coef[1], coef[2], coef[3], coef[4], coef[5], coef[6]
	for i := 7; i < len(out); i++ {
		w := out[i-7 : i+1 : i+1]
		s := c0*int64(w[6]) + c1*int64(w[5]) + c2*int64(w[4]) + c3*int64(w[3]) + c4*int64(w[2]) + c5*int64(w[1]) + c6*int64(w[0])
		w[7] += T(s >> shift)
	}
}

func lpc8[T sample](out []T, coef []int64, shift uint) {
	c0, c1, c2, c3, c4, c5, c6, c7 := coef[0], coef[1], coef[2], coef[3], coef[4], coef[5], coef[6], coef[7]
	for i := 8; i < len(out); i++ {
		w := out[i-8 : i+1 : i+1]
		s := c0*int64(w[7]) + c1*int64(w[6]) + c2*int64(w[5]) + c3*int64(w[4]) + c4*int64(w[3]) + c5*int64(w[2]) + c6*int64(w[1]) + c7*int64(w[0])
		w[8] += T(s >> shift)
	}
}

func lpc9[T sample](out []T, coef []int64, shift uint) {
	c0, c1, c2, c3, c4, c5, c6, c7, c8 := coef[0], coef[1], coef[2], coef[3], coef[4], coef[5], coef[6], coef[7], coef[8]
	for i := 9; i < len(out); i++ {
		w := out[i-9 : i+1 : i+1]
		s := c0*int64(w[8]) + c1*int64(w[7]) + c2*int64(w[6]) + c3*int64(w[5]) + c4*int64(w[4]) + c5*int64(w[3]) + c6*int64(w[2]) + c7*int64(w[1]) + c8*int64(w[0])
		w[9] += T(s >> shift)
	}
}

func lpc10[T sample](out []T, coef []int64, shift uint) {
	c0, c1, c2, c3, c4, c5, c6, c7, c8, c9 := coef[0], coef[1], coef[2], coef[3], coef[4], coef[5], coef[6], coef[7], coef[8], coef[9]
	for i := 10; i < len(out); i++ {
		w := out[i-10 : i+1 : i+1]
		s := c0*int64(w[9]) + c1*int64(w[8]) + c2*int64(w[7]) + c3*int64(w[6]) + c4*int64(w[5]) + c5*int64(w[4]) + c6*int64(w[3]) + c7*int64(w[2]) + c8*int64(w[1]) + c9*int64(w[0])
		w[10] += T(s >> shift)
	}
}

func lpc11[T sample](out []T, coef []int64, shift uint) {
	c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10 := coef[0], coef[1], coef[2], coef[3], coef[4], coef[5], coef[6], coef[7], coef[8], coef[9], coef[10]
	for i := 11; i < len(out); i++ {
		w := out[i-11 : i+1 : i+1]
		s := c0*int64(w[10]) + c1*int64(w[9]) + c2*int64(w[8]) + c3*int64(w[7]) + c4*int64(w[6]) + c5*int64(w[5]) + c6*int64(w[4]) + c7*int64(w[3]) + c8*int64(w[2]) + c9*int64(w[1]) + c10*int64(w[0])
		w[11] += T(s >> shift)
	}
}

func lpc12[T sample](out []T, coef []int64, shift uint) {
	c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11 := coef[0], coef[1], coef[2], coef[3], coef[4], coef[5], coef[6], coef[7], coef[8], coef[9], coef[10], coef[11]
	for i := 12; i < len(out); i++ {
		w := out[i-12 : i+1 : i+1]
		s := c0*int64(w[11]) + c1*int64(w[10]) + c2*int64(w[9]) + c3*int64(w[8]) + c4*int64(w[7]) + c5*int64(w[6]) + c6*int64(w[5]) + c7*int64(w[4]) + c8*int64(w[3]) + c9*int64(w[2]) + c10*int64(w[1]) + c11*int64(w[0])
		w[12] += T(s >> shift)
	}
}
