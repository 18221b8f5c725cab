"""The parity matrix as markdown, JSON or a standalone HTML page."""

from __future__ import annotations

import html
from collections import defaultdict

import msgspec

from .matrix import Cell, Matrix
from .rows import Row

NOT_YET = "not supported yet"
MARK = {"enforced": "✅ enforced", "degraded": "🟡 degraded", "not enforceable": "⛔ not enforceable"}
# the page colours its cells, so it needs no symbols (and no emoji font)
TITLE = "hookgate parity report"
INTRO = ("Computed by `hookgate parity` from the runtime capability tables (`core/hookgate/parity/runtimes/`) "
         "and the needs each gate declares; never written by hand. Each cell names the test that shows it: "
         "enforced and degraded cells are shown by a run of that runtime's pinned binary against the "
         "scripted fake model server. Each runtime is measured on two versions where npm serves them (the "
         "newest and an older one); a version line hookgate does not support yet is listed with the reason.")


def _families(matrix: Matrix) -> dict[str, list[Row]]:
    families: dict[str, list[Row]] = defaultdict(list)
    for row in matrix.rows:
        families[row.family].append(row)
    return families


def _summary(matrix: Matrix) -> list[tuple[str, dict[str, int]]]:
    counts = []
    for runtime in matrix.runtimes:
        tally: dict[str, int] = {status: 0 for status in MARK}
        for row in matrix.rows:
            tally[matrix.cells[row.id][runtime.key].status] += 1
        counts.append((runtime.label, tally))
    return counts


def markdown(matrix: Matrix) -> str:
    lines = [f"# {TITLE}", "", INTRO, ""]
    lines.append("| runtime | package | " + " | ".join(MARK) + " |")
    lines.append("|---|---|" + "---|" * len(MARK))
    for (label, tally), runtime in zip(_summary(matrix), matrix.runtimes):
        lines.append(f"| {label} | `{runtime.package}@{runtime.version}` | " + " | ".join(str(tally[s]) for s in MARK) + " |")
    for runtime in matrix.unsupported:
        lines.append(f"| {runtime.label} | {_md(runtime.package)} | {NOT_YET}: {_md(runtime.unsupported)} |"
                     + " |" * (len(MARK) - 1))
    header = "| gate | " + " | ".join(rt.label for rt in matrix.runtimes) + " |"
    for family, rows in _families(matrix).items():
        lines += ["", f"## {family}", "", header, "|---|" + "---|" * len(matrix.runtimes)]
        for row in rows:
            cells = [_md_cell(matrix.cells[row.id][rt.key]) for rt in matrix.runtimes]
            lines.append(f"| `{row.id}`<br>{_md(row.title)} | " + " | ".join(cells) + " |")
    lines += ["", "## Runtime limits", ""]
    for runtime in matrix.runtimes:
        for key, value in runtime.limits.items():
            lines.append(f"- {runtime.label}, {key.replace('_', ' ')}: {value}")
    return "\n".join(lines) + "\n"


def _md_cell(cell: Cell) -> str:
    text = MARK[cell.status]
    if cell.notes:
        text += ": " + "; ".join(_md(n) for n in cell.notes)
    proof = f"`{cell.proof}`" if cell.proof else "**no test**"
    return f"{text}<br>test: {proof}"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def as_json(matrix: Matrix) -> bytes:
    report = msgspec.to_builtins(matrix)
    for group in ("runtimes", "unsupported"):  # each table with its key, the name its cells go by
        report[group] = [{"key": rt.key, **msgspec.to_builtins(rt)} for rt in getattr(matrix, group)]
    return msgspec.json.format(msgspec.json.encode(report), indent=2) + b"\n"


CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem; color: #1d1d1f; }
table { border-collapse: collapse; margin: 0 0 2rem; width: 100%; table-layout: fixed; }
th, td { border: 1px solid #d0d0d5; padding: .45rem .6rem; vertical-align: top; text-align: left; }
th { background: #f4f4f6; }
td.enforced { background: #e3f6e8; }
td.degraded { background: #fff4d6; }
td.not-enforceable { background: #fde4e4; }
td.unsupported { background: #ececf0; }
.status { font-weight: 600; display: block; }
.note { display: block; margin: .2rem 0; }
.proof { display: block; color: #555; font: 12px ui-monospace, monospace; word-break: break-all; }
.missing { color: #b00020; font-weight: 600; }
code { font: 12px ui-monospace, monospace; }
"""


def page(matrix: Matrix) -> str:
    esc = html.escape
    parts = [f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{TITLE}</title>",
             f"<style>{CSS}</style></head><body><h1>{TITLE}</h1><p>{esc(INTRO)}</p>", "<table><tr><th>runtime</th>"]
    parts += [f"<th>{esc(s)}</th>" for s in MARK] + ["</tr>"]  # the summary
    for label, tally in _summary(matrix):
        parts.append(f"<tr><td>{esc(label)}</td>" + "".join(f"<td>{tally[s]}</td>" for s in MARK) + "</tr>")
    for runtime in matrix.unsupported:
        parts.append(f"<tr><td>{esc(runtime.label)}</td><td class=unsupported colspan={len(MARK)} "
                     f"data-runtime='{esc(runtime.key)}'><span class=status>{NOT_YET}</span>"
                     f"<span class=note>{esc(runtime.unsupported)}</span></td></tr>")
    parts.append("</table>")
    for family, rows in _families(matrix).items():
        parts.append(f"<h2>{esc(family)}</h2><table><tr><th>gate</th>")
        parts += [f"<th>{esc(rt.label)}</th>" for rt in matrix.runtimes] + ["</tr>"]
        for row in rows:
            parts.append(f"<tr><td><code>{esc(row.id)}</code><br>{esc(row.title)}</td>")
            for rt in matrix.runtimes:
                cell = matrix.cells[row.id][rt.key]
                notes = "".join(f"<span class=note>{esc(n)}</span>" for n in cell.notes)
                proof = (f"<span class=proof>test: {esc(cell.proof)}</span>" if cell.proof
                         else "<span class='proof missing'>no test</span>")
                parts.append(f"<td class='{cell.status.replace(' ', '-')}' data-row='{esc(row.id)}' "
                             f"data-runtime='{esc(rt.key)}'><span class=status>{esc(cell.status)}</span>"
                             f"{notes}{proof}</td>")
            parts.append("</tr>")
        parts.append("</table>")
    parts.append("<h2>Runtime limits</h2><ul>")
    for runtime in matrix.runtimes:
        parts += [f"<li>{esc(runtime.label)}, {esc(k.replace('_', ' '))}: {esc(str(v))}</li>" for k, v in runtime.limits.items()]
    parts.append("</ul></body></html>\n")
    return "".join(parts)


FORMATS = {"md": markdown, "json": as_json, "html": page}
