"""The matching primitives a compiled query is made of (`query_tree.compile_node`).

Each is a closure `(doc, why) -> bool` over a `Document`: `term_program` for one term,
`all_of`, `any_of` and `none_of` for AND, OR and NOT. A closure that matches appends the
labels of the positive terms that matched to `why`, which `/why` shows.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.topics.document import Document

Test = Callable[[Document], bool]
Program = Callable[[Document, list[str]], bool]  # appends matched labels to the list


def term_test(field: int | None, keys: tuple[str, ...], prefix: bool) -> Test:
    """The test for one term on `field` (None: the categories, already lower-case)."""
    key = keys[0]
    if field is None:
        if prefix:
            return lambda doc: doc.has_category_prefix(key)
        return lambda doc: key in doc.categories
    where: int = field
    if prefix:
        return lambda doc: doc.has_prefix(where, key)
    if len(keys) > 1:
        return lambda doc: doc.words[where].issuperset(keys) and doc.has_phrase(where, keys)
    return lambda doc: key in doc.words[where]


def term_program(field: int | None, keys: tuple[str, ...], prefix: bool, label: str) -> Program:
    """The program of one term: `term_test` recording `label`. Words, phrases and prefixes
    (all but categories) are tested in the program itself, one call instead of two."""
    where, key = field, keys[0]
    if where is not None and len(keys) > 1:
        has_phrase = Document.has_phrase

        def run_phrase(doc: Document, why: list[str]) -> bool:
            if doc.words[where].issuperset(keys) and has_phrase(doc, where, keys):
                why.append(label)
                return True
            return False

        return run_phrase
    if where is not None:
        if prefix:
            has_prefix = Document.has_prefix

            def run_prefix(doc: Document, why: list[str]) -> bool:
                if has_prefix(doc, where, key):
                    why.append(label)
                    return True
                return False

            return run_prefix

        def run_word(doc: Document, why: list[str]) -> bool:
            if key in doc.words[where]:
                why.append(label)
                return True
            return False

        return run_word
    test = term_test(field, keys, prefix)

    def run(doc: Document, why: list[str]) -> bool:
        if test(doc):
            why.append(label)
            return True
        return False

    return run


#: Words one of which a part cannot match without, by field: ((field, keys), ...); or None.
Need = tuple[tuple[int, frozenset[str]], ...] | None


def all_of(parts: tuple[Program, ...], needs: tuple[Need, ...] = ()) -> Program:
    """Every part must pass; a failure leaves `why` as it was.

    `needs[i]`, when given, names words part i cannot match without: when the paper has
    none of one part's, the whole fails at once (set tests in C) before any part runs."""
    checks = tuple(need for need in needs if need is not None)

    def run(doc: Document, why: list[str]) -> bool:
        if checks:
            words = doc.words
            for need in checks:
                for field, keys in need:
                    if not words[field].isdisjoint(keys):
                        break
                else:
                    return False
        mark = len(why)
        for part in parts:
            if not part(doc, why):
                del why[mark:]
                return False
        return True

    return run


#: A word a part cannot match without, in a field: (field, key, label), where label is the
#: part's label when having the word is all the part asks, else None; or None for no word.
Gate = tuple[int, str, str | None] | None


def any_of(parts: tuple[Program, ...], gates: tuple[Gate, ...] = ()) -> Program:
    """Some part must pass; every part that can runs, so that all reasons are collected.

    `gates[i]`, when given, is a word without which part i cannot match. A rule's long
    list of alternatives is then narrowed by one set intersection per field (in C) to the
    parts whose word the paper has, taken in their order, so `why` is the same as running
    them all; a part that is just its word is recorded without being run."""
    if not any(gates):
        return _each_of(parts)
    always = tuple(i for i, gate in enumerate(gates) if gate is None)
    sure = tuple(gate[2] if gate else None for gate in gates)
    index: dict[int, dict[str, list[int]]] = {}
    for i, gate in enumerate(gates):
        if gate is not None:
            index.setdefault(gate[0], {}).setdefault(gate[1], []).append(i)
    fields = tuple((f, frozenset(by_key), by_key) for f, by_key in index.items())

    def run(doc: Document, why: list[str]) -> bool:
        chosen = [*always]
        words = doc.words
        for f, keys, by_key in fields:
            for key in words[f].intersection(keys):
                chosen.extend(by_key[key])
        if not chosen:
            return False
        found = False
        for i in sorted(chosen) if len(chosen) > 1 else chosen:
            if (label := sure[i]) is not None:
                why.append(label)
                found = True
            else:
                found = parts[i](doc, why) or found
        return found

    return run


def _each_of(parts: tuple[Program, ...]) -> Program:
    def run(doc: Document, why: list[str]) -> bool:
        found = False
        for part in parts:
            found = part(doc, why) or found
        return found

    return run


def none_of(part: Program) -> Program:
    """Negation; what the negated part matched never reaches `why`."""
    return lambda doc, why: not part(doc, [])
