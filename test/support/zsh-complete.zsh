# zsh -f zsh-complete.zsh SCRIPT LINE DUMP: prints, one a line, the matches zsh's own completion
# (compinit, a real line editor on a pseudo-terminal) offers when TAB is pressed after LINE, with
# the completion script SCRIPT loaded. DUMP is compinit's cache file: the first run writes it.
#
# Completion only runs inside the line editor, which needs a terminal: hence zpty. `compadd` is
# wrapped to print what it adds after zsh's own matching (`-O`), each behind a marker, since the
# terminal also echoes the input; the completion's last step exits the shell, which ends the output.
zmodload zsh/zpty || exit 3
zpty shell zsh -f -i
zpty -w shell "PS1=''; autoload -Uz compinit && compinit -u -d ${(q)3}; source ${(q)1}"
# Spelled apart, so that the echo of these lines never holds the marker itself.
zpty -w shell "__marker=@@''match:"
zpty -w shell 'compadd() { if (( ${@[(I)-[OAD]*]} )); then builtin compadd "$@"; return; fi; local -a __m; builtin compadd -O __m "$@"; print -rl -- ${__m/#/$__marker}; builtin compadd "$@"; }'
zpty -w shell 'comppostfuncs=(exit)'
zpty -w -n shell "$2"$'\t'
while zpty -r shell line; do print -r -- "$line"; done | tr -d '\r' | sed -n 's/.*@@match://p'
