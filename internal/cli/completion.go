package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/nrtabi/nrtabi/internal/esc"
)

// completion prints the completion script of one shell: a thin caller of
// `BINARY __complete` (complete.go), the same for every release and spec.
func (a *App) completion(args []string, out, errw io.Writer) int {
	usage := fmt.Sprintf("usage: %s completion bash|zsh|fish\n\nprint the shell completion script (docs/nrtabi-completion.md); install it as make install does:\n"+
		"  bash: source <(%s completion bash)\n  zsh:  %s completion zsh > \"${fpath[1]}/_%s\"\n  fish: %s completion fish > ~/.config/fish/completions/%s.fish\n",
		a.Name, a.Name, a.Name, a.Name, a.Name, a.Name)
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(out, usage)
		return ExitOK
	}
	if len(args) != 1 {
		fmt.Fprint(errw, usage)
		return ExitUsage
	}
	fn := "_" + strings.ReplaceAll(a.Name, "-", "_") + "_complete"
	var script string
	switch args[0] {
	case "bash":
		script = bashScript
	case "zsh":
		script = zshScript
	case "fish":
		script = fishScript
	default:
		fmt.Fprintln(errw, esc.String(unknownLine(a.Name+" completion", "shell", args[0], []string{"bash", "zsh", "fish"}, a.Name+" completion -h")))
		return ExitUsage
	}
	fmt.Fprint(out, strings.NewReplacer("@BIN@", a.Name, "@FN@", fn).Replace(script))
	return ExitOK
}

// The scripts hand the words before the cursor and the word under it to
// __complete and read its lines back: candidates, then the directive
// (:files: file names are candidates too).
const bashScript = `# bash completion for @BIN@, printed by '@BIN@ completion bash' (docs/nrtabi-completion.md)
@FN@() {
	local IFS=$'\n' line files=0
	local -a cands=()
	while IFS= read -r line; do
		case "$line" in
		:files) files=1 ;;
		:nofiles) ;;
		*) cands+=("$line") ;;
		esac
	done < <(@BIN@ __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
	COMPREPLY=("${cands[@]}")
	if ((files)); then
		COMPREPLY+=($(compgen -f -- "${COMP_WORDS[COMP_CWORD]}"))
	fi
}
complete -o filenames -o bashdefault -F @FN@ @BIN@
`

const zshScript = `#compdef @BIN@
# zsh completion for @BIN@, printed by '@BIN@ completion zsh' (docs/nrtabi-completion.md)
@FN@() {
	local -a lines cands
	local files=0 line
	lines=("${(@f)$(@BIN@ __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
	for line in "${lines[@]}"; do
		case "$line" in
		:files) files=1 ;;
		:nofiles|'') ;;
		*) cands+=("$line") ;;
		esac
	done
	(( ${#cands} )) && compadd -- "${cands[@]}"
	(( files )) && _files
	return 0
}
if [ "$funcstack[1]" = "_@BIN@" ]; then
	@FN@ "$@"
else
	compdef @FN@ @BIN@
fi
`

const fishScript = `# fish completion for @BIN@, printed by '@BIN@ completion fish' (docs/nrtabi-completion.md)
function @FN@
	set -l words (commandline -opc)
	set -e words[1]
	set -l cur (commandline -ct)
	for line in (@BIN@ __complete $words $cur 2>/dev/null)
		switch $line
			case :files
				__fish_complete_path $cur
			case :nofiles
			case '*'
				printf '%s\n' $line
		end
	end
end
complete -c @BIN@ -f -a '(@FN@)'
`
