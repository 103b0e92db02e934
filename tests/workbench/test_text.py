from workbench.pdfparse import chunk_page
from workbench.text import count_tokens, normalize_page_text, search_tokens, split_sentences


def test_numbers_with_percent_keep_both_forms() -> None:
    assert {"2.9%", "2.9"} <= set(search_tokens("total welfare increased by 2.9%"))
    assert set(search_tokens("提高2.9%")) >= {"2.9%", "提高"}


def test_cjk_text_becomes_bigrams_and_latin_words_are_stemmed() -> None:
    assert search_tokens("买家保护") == ["买家", "家保", "保护"]
    assert search_tokens("Sellers raised premiums") == ["seller", "rais", "premium"]


def test_decimal_points_do_not_end_sentences() -> None:
    assert split_sentences("Welfare rose 2.9% here. Next one。第三句！") == [
        "Welfare rose 2.9% here.", "Next one。", "第三句！"]


def test_line_wraps_inside_chinese_leave_no_space() -> None:
    assert normalize_page_text("以及\n参数  变化 and\nmore") == "以及参数变化 and more"


def test_chunks_are_exact_substrings_of_the_page() -> None:
    text = " ".join(["这是第一句。"] * 40 + ["A sentence here."] * 20)
    chunks = chunk_page(text, max_chars=120)
    assert len(chunks) > 2 and all(c in text for c in chunks)


def test_token_count_counts_cjk_characters_one_each() -> None:
    assert count_tokens("中文") == 2 and count_tokens("abcdefgh") == 2
