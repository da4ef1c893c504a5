"""Where a shell variable's name is a *use* of the variable although tree-sitter-bash parses it as a
plain word: the operands bash evaluates as arithmetic or reads as variable names.

A rename must reach every use or none (a script that assigns `actor_etp` but reads `train_etp` runs
with an empty value), so each word spelling the name is either one of these uses or makes the whole
rename a manual step.
"""

from __future__ import annotations

import re

# Options of `read` / `mapfile` that take a value (the word after them is not a variable name).
_READ_VALUE_OPTIONS = frozenset({b"-p", b"-d", b"-t", b"-n", b"-N", b"-u", b"-i"})
_MAPFILE_VALUE_OPTIONS = frozenset({b"-d", b"-n", b"-O", b"-s", b"-u", b"-C", b"-c"})
_ARITHMETIC_TEST_OPERATORS = frozenset({b"-eq", b"-ne", b"-lt", b"-le", b"-gt", b"-ge"})
# Builtins whose plain-word operands are variable names (`unset -f` names functions instead).
_NAMING_BUILTINS = frozenset({b"unset", b"export", b"local", b"declare", b"typeset", b"readonly"})


def name_pattern(name: bytes) -> re.Pattern:
    return re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(name) + rb"(?![A-Za-z0-9_])")


def is_variable_use(root, start: int, end: int, src: bytes, associative: dict) -> bool:
    """Is the name at src[start:end] (not a tree-sitter `variable_name`) a use of the variable?
    `associative` caches, per array name, whether the script declares it associative."""
    node = root.descendant_for_byte_range(start, end)
    if node is None:
        return False
    exact = (node.start_byte, node.end_byte) == (start, end) and node.type == "word"
    parent = node.parent
    if parent is None:
        return False
    if exact and parent.type == "subscript":  # `${arr[name]}`, `arr[name]=x`: arithmetic for indexed arrays
        array = parent.child_by_field_name("name")
        if array is None:
            return False
        name = src[array.start_byte:array.end_byte]
        if name not in associative:
            associative[name] = _declared_associative(src, name)
        return not associative[name]
    if exact and parent.type == "binary_expression" and _inside_double_brackets(parent, src):
        operator = parent.child_by_field_name("operator")
        return operator is not None and src[operator.start_byte:operator.end_byte] in _ARITHMETIC_TEST_OPERATORS
    if exact and parent.type == "variable_assignment" and parent.parent is not None and \
            parent.parent.type == "declaration_command" and parent.children[-1].start_byte == start:
        return any(src[c.start_byte:c.end_byte].startswith(b"-") and b"n" in src[c.start_byte:c.end_byte]
                   for c in parent.parent.children if c.type == "word")  # `declare -n ref=name`
    command = parent if parent.type == "command" else (
        parent.parent if parent.type == "string" and parent.parent is not None else None)
    if command is None or command.type != "command":
        return False
    name_node = command.child_by_field_name("name")
    if name_node is None:
        return False
    command_name = src[name_node.start_byte:name_node.end_byte]
    if command_name == b"let":
        return True  # every name in `let` arguments is evaluated arithmetic
    if not exact:
        return False
    words = [c for c in command.children if c.type in ("word", "string", "raw_string", "number", "concatenation")
             and c is not name_node]
    index = next((i for i, w in enumerate(words) if w.start_byte == start), None)
    if index is None:
        return False
    previous = src[words[index - 1].start_byte:words[index - 1].end_byte] if index else b""
    options = [src[w.start_byte:w.end_byte] for w in words if src[w.start_byte:w.start_byte + 1] == b"-"]
    if command_name == b"read":
        return previous not in _READ_VALUE_OPTIONS
    if command_name in (b"mapfile", b"readarray"):
        return previous not in _MAPFILE_VALUE_OPTIONS
    if command_name == b"printf":
        return previous == b"-v"
    if command_name == b"getopts":
        return index == 1
    if command_name in _NAMING_BUILTINS:
        return not any(b"f" in option for option in options)
    return False


def _inside_double_brackets(node, src: bytes) -> bool:
    """In `[[ ]]` the operands of -eq/-gt... are arithmetic; in `[ ]` (a command) they are strings."""
    while node is not None:
        if node.type == "test_command":
            return src[node.start_byte:node.start_byte + 2] == b"[["
        node = node.parent
    return False


def names_a_function(node, src: bytes) -> bool:
    """`unset -f name`: a `variable_name` to tree-sitter, a function to bash."""
    parent = node.parent
    return parent is not None and parent.type == "unset_command" and any(
        c.type == "word" and src[c.start_byte:c.start_byte + 1] == b"-" and b"f" in src[c.start_byte:c.end_byte]
        for c in parent.children)


def _declared_associative(src: bytes, array: bytes) -> bool:
    """Does the script declare `array` associative (`declare -A array`), whose subscripts are strings?"""
    return re.search(rb"\b(?:declare|typeset|local|readonly)(?:[ \t]+-[A-Za-z]*)*[ \t]+-[A-Za-z]*A[A-Za-z]*\b[^\n;]*"
                     rb"(?<![A-Za-z0-9_])" + re.escape(array) + rb"(?![A-Za-z0-9_])", src) is not None
