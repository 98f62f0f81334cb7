"""The README's and docs/benchmarks.md's headline table is the one generated from one results file.

A figure can come only from a named run: ``docs/results/bench.json`` holds the run (its date
and commit too), and both pages must quote exactly what ``bench.headline`` renders from it.
"""

import json

import pytest

from bench import headline


def test_both_pages_quote_the_table_of_the_committed_results_file():
    results = json.loads(headline.RESULTS.read_text())
    assert results["date"] and results["commit"]
    table = headline.render(results)
    assert f"commit {results['commit']}" in table and results["date"] in table
    for page in headline.PAGES:
        text = page.read_text()
        assert headline.replace_table(text, table) == text, f"{page.name} differs from the file"


def test_a_page_without_markers_is_refused():
    with pytest.raises(ValueError, match="no headline-table markers"):
        headline.replace_table("no table here", "| a |")
