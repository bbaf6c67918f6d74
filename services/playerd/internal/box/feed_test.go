package box

import (
	"slices"
	"testing"
)

func TestChangedSections(t *testing.T) {
	type audio struct{ Max int }
	type doc struct {
		Language string   `json:"language"`
		Audio    audio    `json:"audio"`
		Hosts    []string `json:"allowed_hosts"`
	}
	old := doc{"de", audio{80}, nil}
	for _, c := range []struct {
		cur  doc
		want []string
	}{
		{old, nil},
		{doc{"de", audio{50}, nil}, []string{"audio"}},
		{doc{"en", audio{80}, []string{"box.lan"}}, []string{"allowed_hosts", "language"}},
	} {
		got, err := changedSections(old, c.cur)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%+v: %v %v, want %v", c.cur, got, err, c.want)
		}
	}
}
