"""stripewise.bash: bash completion generated from the command tree.

The tree becomes four lookup functions (a command's subcommands, its options, how an option's
value or a positional completes, the choices) and one fixed function walks the words typed so
far through them. Candidates are matched by prefix in bash itself, never through `compgen -W`,
which would expand `$` or backquotes in a choice.
"""

from __future__ import annotations

import shlex

from stripewise.build_docs.commands import Argument, Command, ValueKind

_WALKER = r"""
# prints the candidates of $2 on which the word $1 is a prefix, one per line in COMPREPLY
_stripewise_match() {
    local candidate
    COMPREPLY=()
    while IFS= read -r candidate; do
        [[ -n $candidate && $candidate == "$1"* ]] && COMPREPLY+=("$candidate")
    done <<<"$2"
}

# completes the word $4 as a value of kind $1 (choices: those of key $3 of command $2)
_stripewise_value() {
    local IFS=$'\n'
    case $1 in
        choices) _stripewise_match "$4" "$(_stripewise_choices "$2 $3")" ;;
        file)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$4"))
            ;;
        directory)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$4"))
            ;;
        *) COMPREPLY=() ;;
    esac
}

_stripewise() {
    local cur=${COMP_WORDS[COMP_CWORD]} path='' option='' prefix='' word kind i
    local skip=0 index=0
    # walk the words before the cursor: subcommands extend the path, options skip their value
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        if ((skip > 0)); then
            ((skip--))
            continue
        fi
        case $word in
            =) continue ;;
            -*)
                if [[ $word != *=* ]] && _stripewise_kind "$path $word" >/dev/null; then
                    skip=1
                    [[ ${COMP_WORDS[i + 1]} == = ]] && skip=2  # bash splits --opt=value at =
                    ((i + skip >= COMP_CWORD)) && option=$word
                fi
                continue
                ;;
        esac
        if [[ $'\n'$(_stripewise_subcommands "$path")$'\n' == *$'\n'"$word"$'\n'* ]]; then
            path=${path:+$path }$word
            index=0
        else
            ((index++))
        fi
    done
    [[ -n $option && $cur == = ]] && cur=''
    if [[ -z $option && $cur == --*=* ]]; then  # COMP_WORDBREAKS without =: one word
        option=${cur%%=*}
        cur=${cur#*=}
        prefix=$option=
    fi
    if [[ -n $option ]]; then
        if kind=$(_stripewise_kind "$path $option"); then
            _stripewise_value "$kind" "$path" "$option" "$cur"
            [[ -n $prefix ]] && COMPREPLY=("${COMPREPLY[@]/#/$prefix}")
        fi
        return 0
    fi
    if [[ $cur == -* ]]; then
        _stripewise_match "$cur" "$(_stripewise_options "$path")"
        return 0
    fi
    local subcommands
    subcommands=$(_stripewise_subcommands "$path")
    if [[ -n $subcommands ]]; then
        _stripewise_match "$cur" "$subcommands"
        return 0
    fi
    local -a kinds
    read -r -a kinds <<<"$(_stripewise_positionals "$path")"
    if ((index >= ${#kinds[@]})) && ((${#kinds[@]} > 0)) && [[ ${kinds[-1]} == *'*' ]]; then
        index=$((${#kinds[@]} - 1))  # the last positional takes any number of words
    fi
    if ((index < ${#kinds[@]})); then
        _stripewise_value "${kinds[index]%'*'}" "$path" "#$index" "$cur"
    else
        _stripewise_match "$cur" "$(_stripewise_options "$path")"
    fi
    return 0
}

complete -F _stripewise stripewise
"""


def _key(command: Command, suffix: str = "") -> str:
    path = " ".join(command.path[1:])
    return shlex.quote(f"{path} {suffix}" if suffix else path)


def _lookup(name: str, comment: str, cases: list[tuple[str, list[str]]]) -> list[str]:
    """A function printing, for its argument, the lines of the matching case."""
    lines = [f"# {comment}", f"{name}() {{", "    case $1 in"]
    for key, values in cases:
        if not values:
            continue
        printed = " ".join(shlex.quote(value) for value in values)
        lines.append(f"        {key}) printf '%s\\n' {printed} ;;")
    lines += ["        *) return 1 ;;", "    esac", "}", ""]
    return lines


def _positional_kind(argument: Argument) -> str:
    return argument.kind.value + ("*" if argument.repeatable else "")


def bash_completion(root: Command) -> str:
    commands = root.walk()
    kinds: list[tuple[str, list[str]]] = []
    choices: list[tuple[str, list[str]]] = []
    for command in commands:
        for option in command.options:
            for flag in option.flags:
                if option.takes_value:
                    kinds.append((_key(command, flag), [option.kind.value]))
                if option.kind is ValueKind.CHOICES:
                    choices.append((_key(command, flag), list(option.choices)))
        for index, positional in enumerate(command.positionals):
            if positional.kind is ValueKind.CHOICES:
                choices.append((_key(command, f"#{index}"), list(positional.choices)))
    lines = [
        "# bash completion for stripewise",
        "# Generated by `python -m stripewise.build_docs` from stripewise's argument parser.",
        "",
        *_lookup(
            "_stripewise_subcommands",
            "the subcommands of a command path ('' is stripewise itself)",
            [(_key(c), [s.path[-1] for s in c.subcommands]) for c in commands],
        ),
        *_lookup(
            "_stripewise_options",
            "the options of a command path",
            [(_key(c), [flag for option in c.options for flag in option.flags]) for c in commands],
        ),
        *_lookup(
            "_stripewise_kind",
            "how the value of 'PATH OPTION' completes; fails for a flag or an unknown option",
            kinds,
        ),
        *_lookup(
            "_stripewise_positionals",
            "how each positional of a command path completes (* : it repeats)",
            [
                (_key(c), [" ".join(_positional_kind(p) for p in c.positionals)])
                for c in commands
                if c.positionals
            ],
        ),
        *_lookup("_stripewise_choices", "the choices of 'PATH OPTION' or 'PATH #INDEX'", choices),
    ]
    return "\n".join(lines) + _WALKER
