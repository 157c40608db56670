"""YAML rule files -> checked ``Rule`` objects, with every problem at once.

Files are parsed with the node positions kept, so each problem is reported
as ``file:line:column: error[code]: message`` with what was expected and a
hint. One bad rule never hides the others: every file and every rule is
checked, the valid rules are returned beside the diagnostics.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable, Mapping


from advisor.walk import walk
from advisor.causes import CAUSE_BY_ID
from advisor.errors import Diagnostic
import advisor.facts as vocabulary
from advisor.rulebase import declared_causes
from advisor.rulebase import schema as S
from advisor.rulebase.positions import PosDict, PosList
from advisor.rulebase.evidence import template_env

from advisor.rulebase.check_tests import TestChecks
from advisor.rulebase.load_common import suggest
from advisor.rulebase.check_when import WhenChecks

MAX_RULE_FILE_BYTES = 1_000_000
#: rule files one load reads (the files and folders of one --rules, or of one `advisor rules validate|test`)
MAX_RULE_FILES = 1_000
#: rules one load parses (the built-in rule base holds about 300; each user rule costs about a millisecond)
MAX_RULES = 2_000
#: bytes of rule text one load parses (the built-in rule base: about 0.8 MB, 4 s with the checking parser)
MAX_RULES_BYTES = 4_000_000
MAX_EXPANDED_NODES = 200_000  # values once aliases are expanded (a big rule file has a few thousand)
ID_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


# --------------------------------------------------------------------------- YAML with positions
def _expanded_size(value: Any, memo: dict[int, int]) -> int:
    """Values in ``value`` once YAML aliases are expanded (a shared object counts at each use)."""
    if not isinstance(value, (dict, list)):
        return 1
    key = id(value)
    if key not in memo:
        memo[key] = 1  # a cycle (not possible from safe YAML) would count once
        children = list(value.keys()) + list(value.values()) if isinstance(value, dict) else value
        memo[key] = 1 + sum(_expanded_size(v, memo) for v in children)
    return memo[key]


# --------------------------------------------------------------------------- the checker
class _RuleChecker(WhenChecks, TestChecks):
    def __init__(
        self,
        path: str,
        data: PosDict,
        diags: list[Diagnostic],
        trusted: bool = False,
        declared: Mapping[str, str] | None = None,
    ):
        self.path = path
        #: custom cause ids declared in a causes.yaml beside the rule file (id -> title): known, not warned about
        self.declared: Mapping[str, str] = declared or {}
        self.data = data
        self.diags = diags
        #: the shipped rule base: its evidence templates are checked by the test suite (in full, untrusted
        #: mode), not at every start (parsing 130 templates was ~40% of loading the rules)
        self.trusted = trusted
        self.rule_id: str | None = None
        self.errors = 0

    def check(self) -> S.Rule | None:
        d = self.data
        rid = d.get("id")
        if isinstance(rid, str):
            self.rule_id = rid
            if not ID_RE.match(rid):
                self.err(
                    self._vpos(d, "id"),
                    f"rule id '{rid}' is not lower-case kebab/snake case",
                    expected="letters a-z, digits, '-', '_' or '.'",
                )
        for key in d:
            if key not in S.TOP_KEYS:
                self.err(
                    self._kpos(d, key),
                    f"unknown key '{key}' in rule '{rid}'",
                    expected="one of: " + ", ".join(S.TOP_KEYS),
                    hint=suggest(key, S.TOP_KEYS),
                )
        for key in S.REQUIRED_KEYS:
            if key not in d:
                self.err(d.start, f"rule '{rid}' has no '{key}'", expected=f"a '{key}' key")
        if "cause" in d and "finding" in d:
            self.err(self._kpos(d, "finding"), "a rule concludes either a cause or a finding, not both")
        if "cause" not in d and "finding" not in d:
            self.err(d.start, f"rule '{rid}' concludes nothing", expected="a 'cause' (or a 'finding') key")
        if rid is not None and not isinstance(rid, str):
            self.err(self._vpos(d, "id"), f"'id' must be text, got {rid!r}")
        cause = d.get("cause")
        if cause is not None:
            if not isinstance(cause, str) or not ID_RE.match(cause):
                self.err(self._vpos(d, "cause"), f"'cause' must be a snake_case id, got {cause!r}")
            elif cause not in CAUSE_BY_ID and cause not in self.declared:
                self.err(
                    self._vpos(d, "cause"),
                    f"cause '{cause}' is not in the cause catalogue (a custom cause)",
                    code="unknown-cause",
                    severity="warning",
                    hint=suggest(cause, CAUSE_BY_ID)
                    or "declare it in a causes.yaml beside the rule file (`my_cause: its title`) to silence this",
                )
        finding = d.get("finding")
        if finding is not None and (not isinstance(finding, str) or not ID_RE.match(finding)):
            self.err(self._vpos(d, "finding"), f"'finding' must be a snake_case id, got {finding!r}")
        title = d.get("title")
        if "title" in d and (not isinstance(title, str) or not title.strip()):
            self.err(self._vpos(d, "title"), "'title' must be non-empty text")
        sev = d.get("severity")
        if "severity" in d and sev not in S.SEVERITIES:
            self.err(
                self._vpos(d, "severity"),
                f"severity must be one of low, medium, high, got {sev!r}",
                hint=suggest(str(sev), S.SEVERITIES),
            )
        conf = d.get("confidence")
        if "confidence" in d and (isinstance(conf, bool) or not isinstance(conf, (int, float)) or not -1 <= conf <= 1):
            self.err(self._vpos(d, "confidence"), f"confidence must be a number in -1..1, got {conf!r}")
        params = d.get("params") or {}
        if not isinstance(params, dict):
            self.err(self._vpos(d, "params"), "'params' must be a mapping of names to default values")
            params = {}
        for name, value in params.items():
            if not isinstance(value, (int, float, str, bool)) or value is None:
                self.err(
                    self._vpos(params, name),
                    f"param '{name}' needs a number, text or true/false default, got {value!r}",
                )
        self.params = params
        remedies = d.get("remedies", [])
        if not isinstance(remedies, list) or not all(isinstance(r, str) for r in remedies):
            self.err(self._vpos(d, "remedies"), "'remedies' must be a list of texts")
            remedies = []
        elif cause is not None and not remedies:
            self.err(
                self._vpos(d, "remedies", d.start),
                f"rule '{rid}' concludes a cause but gives no remedies",
                expected="at least one remedy",
            )
        doc = d.get("doc", {})
        if "doc" in d:
            if not isinstance(doc, dict):
                self.err(self._vpos(d, "doc"), "'doc' must be a mapping with what, why, fix")
                doc = {}
            else:
                for key in S.DOC_KEYS:
                    if not isinstance(doc.get(key), str) or not doc.get(key, "").strip():
                        self.err(
                            self._vpos(d, "doc"),
                            f"doc of rule '{rid}' has no '{key}' text",
                            expected="doc.what, doc.why and doc.fix",
                        )
                for key in doc:
                    if key not in S.DOC_KEYS + S.DOC_OPTIONAL:
                        self.err(
                            self._kpos(doc, key),
                            f"unknown key '{key}' in doc",
                            expected="what, why, fix, references",
                            hint=suggest(key, S.DOC_KEYS + S.DOC_OPTIONAL),
                        )
        mode, items = self.check_when(d.get("when"))
        evidence = d.get("evidence", "")
        if "evidence" in d:
            if not isinstance(evidence, str):
                self.err(self._vpos(d, "evidence"), "'evidence' must be a template text")
                evidence = ""
            elif not self.trusted:
                self.check_evidence(evidence, items, self._vpos(d, "evidence"))
        fires, quiet = self.check_tests(d.get("tests"))
        if self.errors:
            return None
        return S.Rule(  # type: ignore[arg-type,union-attr]  # id, title, severity, confidence, mode checked above
            id=rid,  # type: ignore[arg-type]
            title=title.strip(),  # type: ignore[union-attr]
            severity=sev,  # type: ignore[arg-type]
            confidence=float(conf),  # type: ignore[arg-type]
            mode=mode,  # type: ignore[arg-type]
            items=items,
            evidence=evidence.strip(),
            remedies=list(remedies),
            doc=dict(doc),
            cause=cause,
            finding=finding,
            params=dict(params),
            fires=fires,
            quiet=quiet,
            tags=list(d.get("tags") or []),
            path=self.path,
            pos=d.start,
        )

    # -- when
    def check_evidence(self, text: str, items: list[S.Item], pos: S.Pos) -> None:
        from jinja2 import TemplateError, TemplateSyntaxError, meta, nodes  # only when rules are parsed

        env = template_env()
        try:
            ast = env.parse(text)
        except TemplateSyntaxError as exc:
            self.err(
                (pos[0] + (exc.lineno or 1) - 1, pos[1]),
                f"evidence template error: {exc.message}",
                code="evidence-template",
            )
            return
        except RecursionError:  # '{{ [[[[...' a few hundred deep: jinja's parser recurses per level
            self.err(pos, "evidence template error: nested too deep to parse", code="evidence-template")
            return
        pats = {}
        for item in items:
            if isinstance(item, S.Pattern):
                pats[item.alias] = item
            elif isinstance(item, S.AnyOf):
                pats.update({p.alias: p for p in item.items})
        names = set(pats) | set(self.params) | {"params", "rule"}
        try:
            undeclared = meta.find_undeclared_variables(ast)  # compiles: unknown filters/tests surface here
        except RecursionError:
            self.err(pos, "evidence template error: nested too deep to compile", code="evidence-template")
            return
        except TemplateError as exc:
            known = sorted(env.filters)
            text = getattr(exc, "message", None) or str(exc).splitlines()[0]
            bad = re.search(r"named '([^']+)'", text)
            self.err(
                pos,
                f"evidence template error: {text}",
                code="evidence-template",
                hint=suggest(bad.group(1), known) if bad else None,
            )
            return
        for name in sorted(undeclared):
            if name not in names:
                self.err(
                    pos,
                    f"evidence uses '{name}', which is neither a matched fact nor a param",
                    code="evidence-template",
                    expected="one of: " + ", ".join(sorted(names)),
                    hint=suggest(name, names),
                )
        for node in ast.find_all(nodes.Getattr):
            if isinstance(node.node, nodes.Name) and node.node.name in pats:
                kind = pats[node.node.name].kind
                if node.attr not in vocabulary.FACT_KINDS[kind].model_fields:
                    self.err(
                        (pos[0] + node.lineno - 1, pos[1]),
                        f"evidence uses '{node.node.name}.{node.attr}', but '{kind}' has no field '{node.attr}'",
                        code="evidence-template",
                        hint=suggest(node.attr, vocabulary.FACT_KINDS[kind].model_fields),
                    )

    # -- tests


# --------------------------------------------------------------------------- entry points
def parse_rules_text(
    text: str, path: str, trusted: bool = False, declared: Mapping[str, str] | None = None
) -> tuple[list[S.Rule], list[Diagnostic]]:
    """Rules and diagnostics of one file's text. ``trusted``: the shipped rule base (fast parser);
    ``declared``: the custom cause ids of the causes.yaml files that apply to it (id -> title)."""
    rules, diags, _ = parse_counted(text, path, trusted, declared)
    return rules, diags


def parse_counted(
    text: str,
    path: str,
    trusted: bool = False,
    declared: Mapping[str, str] | None = None,
    max_rules: int | None = None,
) -> tuple[list[S.Rule], list[Diagnostic], int]:
    """``parse_rules_text`` that also says how many rules the file holds (valid or not), and reads at most
    ``max_rules`` of a user's file: past it, the file is one ``error[rule-file]`` at the first rule too many and
    the count is ``max_rules + 1``."""
    import yaml  # imported by the rules' parser only: a diagnosis from the rule cache does not load PyYAML

    from advisor.rulebase.rule_yaml import FastLoader, Loader, TooManyRules, count_rules

    if not trusted and max_rules is not None:  # counted before anything is built
        count, past = count_rules(text, max_rules)
        if past is not None:
            return [], [_too_many_rules(path, past)], count
    try:
        loader = FastLoader(text) if trusted else Loader(text, max_rules)
    except yaml.YAMLError as exc:  # a control character: the reader refuses the text before parsing
        at = getattr(exc, "position", 0) or 0
        line, col = text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1
        message = f"not valid YAML: {str(exc).splitlines()[0]}"
        return [], [Diagnostic(path=path, line=line, column=col, code="yaml", message=message)], 0
    try:
        rules, diags = _parse_loaded(loader, path, trusted, declared)
    except TooManyRules as exc:
        mark = exc.problem_mark
        return [], [_too_many_rules(path, (mark.line + 1, mark.column + 1) if mark else (1, 1))], loader.rule_count
    return rules, diags, max(1, getattr(loader, "rule_count", 0))


def _too_many_rules(path: str, pos: S.Pos) -> Diagnostic:
    """The diagnostic at the first rule past ``MAX_RULES``."""
    return Diagnostic(
        path=path,
        line=pos[0],
        column=pos[1],
        code="rule-file",
        message=f"more than {MAX_RULES:,} rules, advisor's limit for one --rules: this file's rules were not loaded",
        hint="keep the rules your diagnoses need (the built-in rule base holds about 300)",
    )


def _parse_loaded(
    loader: Any, path: str, trusted: bool, declared: Mapping[str, str] | None
) -> tuple[list[S.Rule], list[Diagnostic]]:
    """The rules of a file whose loader is made: its YAML read, each rule checked (TooManyRules passes up)."""
    data, refused = _read_yaml(loader, path)
    if refused is not None:
        return [], [refused]
    if not trusted:  # aliases that multiply a structure ("billion laughs") are refused before any walk
        size = _expanded_size(data, {})
        if size > MAX_EXPANDED_NODES:
            return [], [
                _file_error(
                    path,
                    f"expands to {size} values once YAML aliases are expanded "
                    f"(limit {MAX_EXPANDED_NODES}): an anchor bomb?",
                )
            ]
    diags = [
        Diagnostic(path=path, line=pos[0], column=pos[1], code=code, message=msg) for pos, code, msg in loader.problems
    ]
    if data is None:
        return [], diags + [
            Diagnostic(path=path, line=1, column=1, code="rule-schema", message="the file holds no rule")
        ]
    rules = _checked_rules(data, path, diags, trusted, declared)
    if loader.problems:  # duplicate keys make every rule of the file suspect
        rules = []
    return rules, diags


def _file_error(path: str, message: str, line: int = 1, column: int = 1, hint: str | None = None) -> Diagnostic:
    return Diagnostic(path=path, line=line, column=column, code="yaml", message=message, hint=hint)


def _read_yaml(loader: Any, path: str) -> tuple[Any, Diagnostic | None]:
    """(the file's data, None), or (None, why it is no YAML advisor reads); TooManyRules passes up."""
    import yaml

    from advisor.rulebase.rule_yaml import TooManyRules

    try:
        return loader.get_single_data(), None
    except TooManyRules:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        if "another document" in str(exc.problem or ""):
            return None, _file_error(
                path,
                "the file holds several YAML documents ('---')",
                line,
                col,
                hint="put one rule per file, or a YAML list of rules in one document",
            )
        return None, _file_error(path, f"not valid YAML: {exc.problem or exc}", line, col)
    except yaml.YAMLError as exc:
        return None, _file_error(path, f"not valid YAML: {exc}")
    except RecursionError:
        return None, _file_error(path, "not valid YAML: nested too deep")
    except (ValueError, OverflowError) as exc:  # a value no constructor can build (a date out of range...)
        return None, _file_error(path, f"not valid YAML: {str(exc).splitlines()[0][:200]}")
    finally:
        loader.dispose()


def _checked_rules(
    data: Any, path: str, diags: list[Diagnostic], trusted: bool, declared: Mapping[str, str] | None
) -> list[S.Rule]:
    """Each mapping of the file's data (one rule, or a list of them) checked into a rule; problems into diags."""
    docs = data if isinstance(data, list) else [data]
    rules = []
    for i, d in enumerate(docs):
        if not isinstance(d, PosDict):
            pos = data.pos[i] if isinstance(data, PosList) else (1, 1)
            diags.append(
                Diagnostic(
                    path=path,
                    line=pos[0],
                    column=pos[1],
                    code="rule-schema",
                    message="a rule must be a mapping (id, cause, title, ...)",
                )
            )
            continue
        rule = _RuleChecker(path, d, diags, trusted, declared).check()
        if rule is not None:
            rules.append(rule)
    return rules


def rule_file_kind_problem(f: Path, folder: Path) -> str | None:
    """Why an entry ``f`` of the rules folder ``folder`` is not a rule file advisor reads (None: it is one): not
    a regular file (a FIFO, whose opening blocks; a device such as a link to /dev/zero, which never ends; a
    socket; a symbolic-link loop or a link to nothing), or a symbolic link that leads outside the folder."""
    from advisor.read.safe import file_problem, resolve

    problem = file_problem(f)
    if problem is not None or not f.is_symlink():
        return problem
    target, root = resolve(f), resolve(folder)
    if target is None or root is None or not target.is_relative_to(root):
        return "a symbolic link that leads outside the rules folder"
    return None


def _refused_kind(f: Path, problem: str) -> Diagnostic:
    return Diagnostic(
        path=str(f),
        code="rule-file",
        message=f"refused: {problem}",
        hint="a rules folder holds regular rule files only: move this entry out, or name the rule files to load",
    )


def rule_files(paths: Iterable[str | Path]) -> tuple[list[Path], list[Diagnostic]]:
    """The rule files of the files and folders given; a ``.yaml``/``.yml`` entry of a folder that is not a regular
    file inside it (``rule_file_kind_problem``) is an error, with the reason: the other files are still read."""
    import os

    from advisor.read.safe import file_problem

    files: list[Path] = []
    diags: list[Diagnostic] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found: list[Path] = []
            for dirpath, dirnames, names in walk(p):
                dirnames.sort()
                for name in sorted(names):
                    f = Path(dirpath) / name
                    if f.suffix not in (".yaml", ".yml") or declared_causes.is_causes_file(f):
                        continue
                    problem = rule_file_kind_problem(f, p)
                    if problem is None:
                        found.append(f)
                    else:
                        diags.append(_refused_kind(f, problem))
                    if len(files) + len(found) > MAX_RULE_FILES:  # counted before any is parsed
                        break
                if len(files) + len(found) > MAX_RULE_FILES:
                    break
            if len(files) + len(found) > MAX_RULE_FILES:
                diags.append(_too_many_files(p))
                continue
            files.extend(sorted(found))
        elif p.is_file():
            if len(files) >= MAX_RULE_FILES:
                diags.append(_too_many_files(p))
                continue
            files.append(p)
        else:
            problem = file_problem(p) if os.path.lexists(p) else None
            diags.append(
                Diagnostic(
                    path=str(p),
                    code="rule-file",
                    message=f"skipped: {problem}" if problem else "no such rule file or folder",
                )
            )
    return files, diags


def _too_many_files(path: Path) -> Diagnostic:
    return Diagnostic(
        path=str(path),
        code="rule-file",
        message=f"more than {MAX_RULE_FILES:,} rule files, advisor's limit for one --rules: none of them loaded",
        hint="name the folder of the rules your diagnoses need",
    )


def _read_rule_file(f: Path, shown: str) -> str | Diagnostic:
    """The text of a rule file, read up to its size limit (a huge or endless file is not read whole)."""
    try:
        with open(f, "rb") as fh:
            raw = fh.read(MAX_RULE_FILE_BYTES + 1)
        if len(raw) > MAX_RULE_FILE_BYTES:
            return Diagnostic(
                path=shown, code="rule-file", message=f"rule file larger than {MAX_RULE_FILE_BYTES} bytes"
            )
        return raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return Diagnostic(path=shown, code="rule-file", message=f"cannot read the rule file: {exc}")


def load_rules(
    paths: Iterable[str | Path], display_root: Path | None = None, trusted: bool = False
) -> tuple[list[S.Rule], list[Diagnostic]]:
    """Every rule in the files/folders given; all problems (including duplicate ids) at once."""
    given = [Path(p) for p in paths]
    files, diags = rule_files(given)
    rules: list[S.Rule] = []
    declared: dict[Path, dict[str, str]] = {}  # causes.yaml -> its declarations, each file read once
    budget = MAX_RULES  # rules a user's files may still hold (counted as they are parsed)
    text_left = MAX_RULES_BYTES  # and the bytes of text
    for k, f in enumerate(files):
        if budget < 0 and not trusted:  # a file passed the limit (its error is given): the files left are not read
            message = f"{len(files) - k} rule files not read: past {MAX_RULES:,} rules, advisor's limit for one --rules"
            diags.append(Diagnostic(path=str(f), code="rule-file", message=message))
            break
        if not trusted:
            root = next((p for p in given if p.is_dir() and f.is_relative_to(p)), f.parent)
            known: dict[str, str] = {}
            for cf in declared_causes.causes_files_for(f, root):
                if cf not in declared:
                    declared[cf], cf_diags = declared_causes.read_causes_file(cf)
                    diags.extend(cf_diags)
                known = declared[cf] | known  # the nearest declaration wins
        else:
            known = {}
        shown = str(f.relative_to(display_root)) if display_root and f.is_relative_to(display_root) else str(f)
        text = _read_rule_file(f, shown)
        if isinstance(text, Diagnostic):
            diags.append(text)
            continue
        text_left -= 0 if trusted else len(text)
        if text_left < 0:
            message = (
                f"past {MAX_RULES_BYTES:,} bytes of rules, advisor's limit for one --rules: "
                f"this file and the {len(files) - k - 1} after it were not read"
            )
            diags.append(Diagnostic(path=shown, code="rule-file", message=message))
            break
        file_rules, file_diags, count = parse_counted(text, shown, trusted, known, None if trusted else budget)
        for r in file_rules:
            if r.cause in known:
                r.cause_title = known[r.cause]
        diags.extend(file_diags)
        rules.extend(file_rules)
        budget -= count
    return merge_rule_sets([(rules, diags)])


def merge_rule_sets(
    groups: Iterable[tuple[Iterable[S.Rule], Iterable[Diagnostic]]],
) -> tuple[list[S.Rule], list[Diagnostic]]:
    """Rules of several loads in order; a repeated id is an error at its second place and is dropped."""
    rules: list[S.Rule] = []
    diags: list[Diagnostic] = []
    seen: dict[str, S.Rule] = {}
    for group_rules, group_diags in groups:
        diags.extend(group_diags)
        for r in group_rules:
            if r.id in seen:
                first = seen[r.id]
                diags.append(
                    Diagnostic(
                        path=r.path,
                        line=r.pos[0],
                        column=r.pos[1],
                        code="duplicate-id",
                        rule=r.id,
                        message=f"rule id '{r.id}' is already used",
                        hint=f"first defined at {first.path}:{first.pos[0]}",
                    )
                )
                continue
            seen[r.id] = r
            rules.append(r)
    return rules, diags
