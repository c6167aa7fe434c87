package main

import (
	"io"

	"github.com/nrtabi/nrtabi/compat"
	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/internal/render"
)

// compatRules are the SARIF rules of compat: one per verdict class, and
// one for a fact not seen (docs/nrtabi-compat.md#verdict-classes).
var compatRules = []render.SARIFRule{
	{ID: string(compat.Reverse), Short: "libnccom's imports on libnrt are not met at dlopen", Level: render.LevelError},
	{ID: string(compat.Dlsym), Short: "a neuron* entry point libnrt dlsyms is not exported", Level: render.LevelError},
	{ID: string(compat.CompatGate), Short: "the probe's compatibility id is not the one libnrt expects", Level: render.LevelError},
	{ID: string(compat.NetPlugin), Short: "the plugin exports no table the libraries take", Level: render.LevelError},
	{ID: string(compat.Layout), Short: "a struct both sides share is laid out differently", Level: render.LevelError},
	{ID: "unseen", Short: "a fact the verdict needs could not be read", Level: render.LevelWarning},
}

// writeCompatSARIF writes r as a SARIF log: each finding a result at the
// file it is about (libnrt for the dlopen stage, the plugin for its stage,
// libnccom otherwise), a note when it does not stop the load; each unseen
// fact a warning.
func writeCompatSARIF(w io.Writer, r *compat.Report, root string) error {
	help := "https://github.com/nrtabi/nrtabi/blob/main/docs/nrtabi-compat.md"
	rules := make([]render.SARIFRule, len(compatRules))
	for i, rl := range compatRules {
		rl.Full, rl.HelpURI = rl.Short, help
		rules[i] = rl
	}
	run := render.SARIFRun{Tool: "nrtabi", Version: cli.ModuleVersion(), InformationURI: "https://github.com/nrtabi/nrtabi", SourceRoot: root,
		Rules: rules, Anchor: r.Libnccom,
		Properties: map[string]any{"command": "compat", "release": r.Release, "verdict": string(r.Verdict), "layout": r.Layout, "exit": r.Exit}}
	for _, f := range r.Findings {
		file := r.Libnccom
		switch f.Class {
		case compat.Reverse:
			file = r.Libnrt
		case compat.NetPlugin:
			file = r.Plugin
		}
		level := render.LevelError
		if !f.Fatal {
			level = render.LevelNote
		}
		msg := f.Message
		if f.Fix != "" {
			msg += " Fix: " + f.Fix
		}
		run.Findings = append(run.Findings, render.SARIFResult{RuleID: string(f.Class), Level: level, Message: msg,
			Place: render.Place{File: file, Logical: []render.Logical{{Name: f.Subject, FullyQualifiedName: f.Subject, Kind: "member"}}},
			Key:   file + "|" + string(f.Class) + "|" + f.Subject})
	}
	for _, u := range r.Unseen {
		run.Findings = append(run.Findings, render.SARIFResult{RuleID: "unseen", Level: render.LevelWarning, Message: u,
			Place: render.Place{File: r.Libnccom}, Key: r.Libnccom + "|unseen|" + u})
	}
	return render.SARIF(w, run)
}
