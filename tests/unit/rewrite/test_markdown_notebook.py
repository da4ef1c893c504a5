"""Markdown / rst / text and notebook rewriters: block dispatch, JSON-token edits, validation."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from migrator.fileprocess import process_file
from migrator.rewrite import markdown as md_rewriter
from migrator.rewrite import notebook as nb_rewriter
from tests.helpers.rewrite import check_noop, check_transformed, run

BUCKET = "actor_rollout_ref.rollout.update_weights_bucket_megabytes"
NEW_BUCKET = "actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes"
SCRIPT = "examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh"
NEW_SCRIPT = "examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh"


def test_markdown_prose_inline_code_and_links():
    check_transformed(f"See [it]({SCRIPT}) and `{BUCKET}=1`; {BUCKET} too.\n",
                      f"See [it]({NEW_SCRIPT}) and `{NEW_BUCKET}=1`; {NEW_BUCKET} too.\n", "README.md")


def test_markdown_shell_block_removes_a_removed_override_line():
    check_transformed(f"```sh\npython3 -m verl.trainer.main_ppo \\\n    trainer.use_legacy_worker_impl=auto \\\n"
                      f"    {BUCKET}=1\n```\n",
                      f"```sh\npython3 -m verl.trainer.main_ppo \\\n    {NEW_BUCKET}=1\n```\n", "README.md")


def test_markdown_block_that_does_not_parse_falls_back_to_the_text_scan():
    check_transformed(f"```python\ndef broken(:\n    run('{BUCKET}=1')\n```\n",
                      f"```python\ndef broken(:\n    run('{NEW_BUCKET}=1')\n```\n", "README.md")


def test_markdown_noops():
    check_noop(f"`{BUCKET}_note=1` and my_{SCRIPT}\n", "README.md")
    check_noop(f"```bash\necho {BUCKET}=1  # verl-migrate: skip\n```\n", "README.md")


def test_markdown_validate_keeps_fences():
    assert md_rewriter.validate(b"```bash\nx\n```\n", b"```bash\ny\n```\n") is None
    assert "fences" in md_rewriter.validate(b"```bash\nx\n```\n", b"``bash\nx\n```\n")


def test_rst_code_block_goes_through_the_shell_rewriter():
    check_transformed(".. code-block:: bash\n\n"
                      "    export VLLM_ATTENTION_BACKEND=XFORMERS  # ASCEND_RT_VISIBLE_DEVICES\n"
                      f"    bash {SCRIPT}\n",
                      ".. code-block:: bash\n\n    # verl-migrate: removed (verl#6066): export "
                      f"VLLM_ATTENTION_BACKEND=XFORMERS  # ASCEND_RT_VISIBLE_DEVICES\n    bash {NEW_SCRIPT}\n",
                      "guide.rst")


def _notebook(*sources, indent=1) -> bytes:
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": s}
             for s in sources]
    cells.append({"cell_type": "markdown", "metadata": {}, "source": [f"`{BUCKET}=1`"]})
    return (json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=indent,
                       ensure_ascii=True) + "\n").encode()


def test_an_override_list_of_one_cell_is_renamed_for_the_launch_of_another():
    """The notebook as a whole launches verl; its JSON escapes (`\\"-m\\", \\"verl...`) do not hide that."""
    before = _notebook([f'ARGS = ["{BUCKET}=512"]\n'],
                       ['subprocess.run(["python3", "-m", "verl.trainer.main_ppo", *ARGS])\n'])
    result = run(before, "nb.ipynb")
    assert result.after == before.replace(BUCKET.encode(), NEW_BUCKET.encode(), 1)
    assert [f.code for f in result.findings] == []


def test_notebook_edits_only_code_cell_string_tokens():
    # an override list item after an escaped character of the same source line (the offsets map through it)
    before = _notebook([f'x = ["\\u00e9", "{BUCKET}=1"]\n', f"!python -m recipe.fully_async_policy.main {BUCKET}=2"])
    result = run(before, "nb.ipynb")
    assert result.status == "changed"
    expected = before.replace(f'\\"{BUCKET}=1'.encode(), f'\\"{NEW_BUCKET}=1'.encode()) \
        .replace(f"main {BUCKET}".encode(), f"main {NEW_BUCKET}".encode()) \
        .replace(b"recipe.fully_async_policy", b"verl.experimental.fully_async_policy")
    assert result.after == expected  # the markdown cell and all formatting unchanged
    assert run(result.after, "nb.ipynb").status == "unchanged"


def test_notebook_single_string_source_and_compact_json():
    before = _notebook("import verl.utils.npu_utils as nu\n", indent=None)
    result = run(before, "nb.ipynb")
    assert result.after == before.replace(b"verl.utils.npu_utils", b"verl.utils.npu_flash_attn_utils")


def test_notebook_edit_across_source_lines_is_a_manual_step():
    before = _notebook(["%%bash\n", "python3 -m verl.trainer.main_ppo \\\n",
                        "    trainer.use_legacy_worker_impl=auto\n",
                       "echo done\n"])
    result = run(before, "nb.ipynb")
    assert result.status == "unchanged"
    assert any("edit by hand" in f.message for f in result.findings)



def test_a_bang_command_continued_with_a_backslash_is_one_shell_command():
    """IPython joins a `!` line ending in `\\` with the next one: an override there is the command's, and a
    removed one is deleted like any other (the next line was once left to the Python rewriter, which could
    only report "delete it by hand")."""
    lines = ["!python3 -m verl.trainer.main_ppo trainer.nnodes=1 \\\n", "    trainer.use_legacy_worker_impl=auto \\\n",
             "    trainer.n_gpus_per_node=8\n"]
    before = _notebook(lines)
    result = run(before, "nb.ipynb")
    assert result.status == "changed", result.findings
    assert result.after == _notebook([lines[0], "", lines[2]])
    assert run(result.after, "nb.ipynb").status == "unchanged"


def test_notebook_validate():
    before = _notebook(["x = 1"])
    assert nb_rewriter.validate(before, before.replace(b"x = 1", b"x = 2")) is None
    assert "more than code cell sources" in nb_rewriter.validate(before, before.replace(b"`" + BUCKET.encode(), b"`a"))
    assert "not be valid JSON" in nb_rewriter.validate(before, before[:-3])


def test_string_tokens_follow_json_paths():
    src = b'{"a": [1, "x\\"y", {"b": "\\u00e9"}], "c": true}'
    tokens = nb_rewriter.string_tokens(src)
    assert {path: src[s:e] for path, (s, e) in tokens.items()} == {("a", 1): b'"x\\"y"', ("a", 2, "b"): b'"\\u00e9"'}


# -- notebooks that loaded but were internal errors ------------------------------------------------------
def _raw_notebook(cells: list[str], metadata: str = "") -> str:
    code = [f'{{"cell_type": "code", "metadata": {{}}, "outputs": [], "source": [{",".join(lines)}]}}'
            for lines in cells]
    return f'{{"cells": [{", ".join(code)}], "metadata": {{{metadata}}}, "nbformat": 4, "nbformat_minor": 5}}'


BANG = json.dumps(f"!python3 -m verl.trainer.main_ppo {BUCKET}=1\n")


def test_a_notebook_whose_source_holds_a_number_is_a_clear_skip():
    result = run(_raw_notebook([["5", BANG]]), "n.ipynb")
    assert result.status == "skipped" and result.code == "VM203"
    assert result.reason == "not a notebook: the source of cell 1 holds something that is not text"


def test_lone_surrogate_escapes_are_kept_and_edits_after_them_land_where_they_belong():
    source = _raw_notebook([['"x = \'\\ud800\\u0041\'\\n"', BANG, '"y = \'\\udc00\'\\n"'],
                        [f'"s = \'\\ud800\\u0041\\u00e9 +{BUCKET}=1\'\\n"', '"\\ud83d\\ude00\\n"']])
    result = run(source, "n.ipynb")
    assert result.status == "changed", (result.status, result.reason)
    assert result.after.decode() == source.replace(BUCKET, NEW_BUCKET)


def test_a_notebook_nested_deeper_than_the_json_decoder_goes_is_a_clear_skip():
    result = run(_raw_notebook([[BANG]], '"x": ' + "[" * 100_000 + "]" * 100_000), "n.ipynb")
    assert result.status == "skipped", (result.status, result.reason)
    assert result.reason == "not a parsable notebook: its JSON is nested too deeply"


def test_a_number_longer_than_python_converts_is_kept_and_the_notebook_migrated():
    source = _raw_notebook([[BANG]], '"seed": ' + "7" * 5_001)
    result = run(source, "n.ipynb")
    assert result.status == "changed", (result.status, result.reason)
    assert result.after.decode() == source.replace(BUCKET, NEW_BUCKET)


# -- code blocks the run missed ----------------------------------------------------------------------------
NESTED_YAML = f"```yaml\nactor_rollout_ref:\n  rollout:\n    {BUCKET.rsplit('.', 1)[1]}: 512\n```\n"


def test_a_yaml_block_with_an_old_nested_key_passes_the_markdown_prefilter():
    """The Markdown prefilter looked only for dotted keys: the block was `unchanged` in a real run."""
    from migrator.filekind import build_prefilter
    from tests.helpers.rewrite import mappings

    prefilter = build_prefilter(mappings())
    assert prefilter(NESTED_YAML.encode(), "markdown")
    result = process_file("README.md", "README.md", mappings(), prefilter, data=NESTED_YAML.encode())
    assert result.status == "changed", (result.status, result.reason)
    assert b"checkpoint_engine:" in result.after
    # a key's components must all occur: a README that says `rollout` and `name` is still skipped unread
    assert not prefilter(b"The rollout name and the path of the model.\n", "markdown")


@pytest.mark.parametrize("name, before, after", [
    ("README.md", "1. Install:\n\n   ```python\n   import verl.utils.npu_utils as nu\n   ```\n",
     "1. Install:\n\n   ```python\n   import verl.utils.npu_flash_attn_utils as nu\n   ```\n"),
    ("README.md", "- item\n\n  ```python\n  from recipe import fully_async_policy, other\n\n  x = 1\n  ```\n",
     "- item\n\n  ```python\n  from verl.experimental import fully_async_policy\n  from recipe import other\n\n  x = 1\n"
     "  ```\n"),
    ("README.md", f"* config:\n\n  ```yaml\n  actor_rollout_ref:\n    rollout:\n      {BUCKET.rsplit('.', 1)[1]}: 512\n"
                  "      name: vllm\n  ```\n",
     f"* config:\n\n  ```yaml\n  actor_rollout_ref:\n    rollout:\n      name: vllm\n      checkpoint_engine:\n"
     f"        {BUCKET.rsplit('.', 1)[1]}: 512\n  ```\n"),
    ("guide.rst", ".. code-block:: python\n\n    import verl.utils.npu_utils\n\n    verl.utils.npu_utils.f()\n",
     ".. code-block:: python\n\n    import verl.utils.npu_flash_attn_utils\n\n    verl.utils.npu_flash_attn_utils.f()\n"),
])
def test_indented_python_and_yaml_blocks_go_through_their_rewriter(name, before, after):
    """A fence in a list item (and an rst body) is indented: Python and YAML did not parse it."""
    check_transformed(before, after, name)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["a = 1", "b:", "  c", "", "   ", "x\r"]), min_size=1, max_size=6),
       st.sampled_from([b"  ", b"   ", b"\t", b"    "]), st.data())
def test_a_dedented_blocks_edits_map_back_to_the_indented_block(lines, indent, data):
    """Edits made on the dedented block and mapped back give the block whose dedented form is the edited one."""
    from migrator.edits import Edit
    from migrator.rewrite.markdown import _Dedented

    body = b"".join((indent + line.encode() if line.strip() else line.encode()) + b"\n" for line in lines)
    src = b"```python\n" + body + indent + b"```\n"
    start, end = len(b"```python\n"), len(b"```python\n") + len(body)
    block = _Dedented(src, start, end)
    assert block.indent.startswith(indent) or not any(line.strip() for line in lines)

    def blank_lines_bare(text: bytes) -> bytes:
        return b"".join(line if line.strip() else line.lstrip(b" \t") for line in text.splitlines(keepends=True))

    def dedented(text: bytes) -> bytes:  # by the block's indent
        return blank_lines_bare(b"".join(line[len(block.indent):] if line.strip() and line.startswith(block.indent)
                                         else line for line in text.splitlines(keepends=True)))

    cut = data.draw(st.integers(0, len(block.text)))
    stop = data.draw(st.integers(cut, len(block.text)))
    # No edit splits a CRLF or starts inside a blank line's blanks: rewriters edit tokens and whole lines.
    assume(not any(block.text[at - 1:at + 1] == b"\r\n" for at in (cut, stop)))
    for at in (cut, stop):
        line_start, line_end = block.text.rfind(b"\n", 0, at) + 1, block.text.find(b"\n", at)
        assume(at == line_start or block.text[line_start:line_end if line_end != -1 else None].strip())
    replacement = data.draw(st.sampled_from([b"", b"z", b"q\n", b"r\ns", b"\n\nt\n", b"u\r\n"]))
    edit = block.edit(Edit(cut, stop, replacement, "k", "m"))
    new = src[:edit.start] + edit.replacement + src[edit.end:]
    body = new[start:len(new) - len(indent + b"```\n")]
    assert dedented(body) == blank_lines_bare(block.text[:cut] + replacement + block.text[stop:])
    assert all(line.startswith(block.indent) for line in body.splitlines() if line.strip())
    assert new.endswith(indent + b"```\n") and new.startswith(b"```python\n")
