package layoutcheck

// Waive marks every fact accept answers with a waiver, wherever the report
// holds it (the file's structs, enums and contract rules, and the report's
// list), then recounts: the counts, the exit bits, the verdict and the
// statuses are of the facts not waived. accept sees each fact, never a
// consequence (a waived fact takes its consequences with it).
func (r *Report) Waive(accept func(Finding) *Waiver) {
	mark := func(fs []Finding) {
		for i := range fs {
			fs[i].Waived = accept(fs[i])
		}
	}
	for _, fr := range r.Files {
		for _, s := range fr.Structs {
			mark(s.Findings)
		}
		for _, e := range fr.Enums {
			mark(e.Findings)
			e.Status = statusOfSeverity(worst(unwaived(e.Findings)))
		}
		for i := range fr.Contract {
			c := &fr.Contract[i]
			mark(c.Findings)
			c.OK = c.OK || worst(unwaived(c.Findings)) < Incompatible
		}
		fr.restatus()
	}
	mark(r.Findings)
	r.Compatible, r.Incompat, r.Waived = 0, 0, 0
	exit := r.Exit &^ (int(Compatible) | int(Incompatible))
	r.Exit = 0
	for _, f := range r.Findings {
		if f.Waived != nil {
			r.Waived++
			continue
		}
		r.count(f)
	}
	r.Exit |= exit
	r.setVerdict()
}

// restatus grades each struct by the facts not waived that are its own or
// that change it where it embeds their struct, as check graded it.
func (fr *FileReport) restatus() {
	var facts []Finding
	for _, s := range fr.Structs {
		facts = append(facts, unwaived(s.Findings)...)
	}
	for _, e := range fr.Enums {
		facts = append(facts, unwaived(e.Findings)...)
	}
	for _, s := range fr.Structs {
		w := worst(unwaived(s.Findings))
		for _, f := range facts {
			if f.Struct == s.Name {
				w = max(w, worst([]Finding{f}))
			}
			for _, at := range f.EmbeddedIn {
				if len(at) > len(s.Name) && at[:len(s.Name)+1] == s.Name+"." {
					w = max(w, worst([]Finding{f}))
				}
			}
		}
		s.Status = statusOfSeverity(w)
	}
}

func unwaived(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Waived == nil {
			out = append(out, f)
		}
	}
	return out
}
