# bash --norc bash-complete.sh SCRIPT WORD…: prints, one a line, what the completion function
# SCRIPT registers for claude-peers offers with COMP_WORDS set to the words (the program first,
# the word being completed last), called with the arguments bash gives it: the command, the word,
# and the word before it.
source "$1" || exit 3
shift
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
spec=$(complete -p claude-peers) || exit 4
function=${spec##*-F }
function=${function%% *}
"$function" claude-peers "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
