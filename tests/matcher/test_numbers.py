"""Numbers in final text (docs/matcher.md#numbers-in-final-text): what counts as a number,
and which one is the answer."""

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.matcher.numbers import _last_number_by_full_scan, last_number


def check(text, expected):
    got = last_number(text)
    if expected is None:
        assert got is None, (text, got)
    else:
        assert got is not None, text
        assert got == Decimal(expected), (text, got)


# --- the examples written in docs/matcher.md#numbers-in-final-text ---------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x-1", "1"),
        ("range 2-5", "5"),
        ("2024-01-15", "15"),
        ("it is -3", "-3"),
        ("1,234,567", "1234567"),
        ("1,23", "23"),
        ("3.25", "3.25"),
        (".5", "0.5"),
        ("42.", "42"),
        ("3e5", "300000"),
        ("1.2E-3", "0.0012"),
    ],
)
def test_examples_of_the_design(text, expected):
    check(text, expected)


def test_u2212_minus_sign_counts_as_a_sign():
    check("it is \u22123", "-3")


def test_plus_sign_counts_as_a_sign():
    check("it is +3", "3")
    check("delta +0.5", "0.5")


def test_other_scripts_digits_are_not_numbers():
    check("\u0663", None)  # ARABIC-INDIC DIGIT THREE
    check("\uff11\uff12", None)  # FULLWIDTH 1 2
    check("\u0967\u0968", None)  # DEVANAGARI 1 2
    check("x\u00b2", None)  # SUPERSCRIPT TWO


def test_no_number_is_none():
    check("", None)
    check("no numbers here", None)
    check("- + \u2212 . , e E", None)


# --- signs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x-1", "1"),
        ("a+2", "2"),
        ("B\u22123", "3"),
        ("v-10", "10"),
        ("Z-.5", "0.5"),
    ],
)
def test_sign_glued_to_a_preceding_ascii_letter_does_not_count(text, expected):
    check(text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("2-5", "5"), ("3+4", "4"), ("7\u22128", "8"), ("1,000-2,000", "2000"), ("555-0100", "100")],
)
def test_sign_glued_to_a_preceding_ascii_digit_does_not_count(text, expected):
    check(text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("-3", "-3"),
        ("(-3)", "-3"),
        ("x=-3", "-3"),
        ("[\u22124]", "-4"),
        ("\u00e9-3", "-3"),  # é is not an ASCII letter
        ("\u0663-3", "-3"),  # an Arabic-Indic digit is not an ASCII digit
        ("--3", "-3"),
        ("-.5", "-0.5"),
        ("is -1,234.5", "-1234.5"),
        ("_-2", "-2"),
    ],
)
def test_sign_not_glued_to_an_ascii_letter_or_digit_counts(text, expected):
    check(text, expected)


def test_minus_zero_is_zero():
    check("-0", "0")


# --- digits and comma groups -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12,345", "12345"),
        ("1,234.5", "1234.5"),
        ("1,234,", "1234"),
        ("1,234, then", "1234"),
        ("$1,299.99", "1299.99"),
        ("1,000,000 users", "1000000"),
    ],
)
def test_commas_group_digits_in_threes(text, expected):
    check(text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,23", "23"),
        ("1,2345", "2345"),  # three digits then a digit: not a group
        ("1,234,5678", "5678"),
        ("1,234,56", "56"),
        ("1,", "1"),
        ("1,,234", "234"),
        ("3, 4", "4"),
    ],
)
def test_a_comma_not_followed_by_exactly_three_digits_and_a_non_digit_ends_the_number(
    text, expected
):
    check(text, expected)


def test_indian_style_grouping_is_not_a_group_of_three():
    # "12,34,567": 12 ends at ",34,"; then 34 takes ",567" as a group.
    check("12,34,567", "34567")


def test_digits_glued_to_letters_are_still_numbers():
    check("room B12", "12")
    check("H2O", "2")
    check("0x1F", "1")


def test_a_short_group_ends_the_number_before_it():
    # "1,23" reads 1, then 23: the last number is 23 but "1,23" is never one number 123.
    assert last_number("1,23") != Decimal(123)


def test_digits_are_exact_however_many():
    check("id 123456789012345678901234567890", "123456789012345678901234567890")
    check("9007199254740993", "9007199254740993")


def test_leading_zeros_are_read_as_digits():
    check("007", "7")
    check("0.050", "0.05")


# --- fractions -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3.25", "3.25"),
        ("It costs 3.25.", "3.25"),
        (".5", "0.5"),
        ("about .5 of it", "0.5"),
        ("42.", "42"),
        ("The answer is 42.", "42"),
        ("42.x", "42"),
        ("42..", "42"),
        ("0.1", "0.1"),
    ],
)
def test_a_fraction_needs_at_least_one_digit_after_the_point(text, expected):
    check(text, expected)


def test_a_second_point_starts_a_new_fraction():
    check("version 1.2.3", "0.3")


def test_fraction_keeps_exact_decimal_value():
    assert last_number("1.1") - last_number("1.0") == Decimal("0.1")


# --- exponents -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3e5", "3e5"),
        ("3E5", "3e5"),
        ("2e+2", "200"),
        ("1.2E-3", "0.0012"),
        (".5e1", "5"),
        ("-2.5e2", "-250"),
        ("1,234e2", "123400"),
    ],
)
def test_an_exponent_is_part_of_the_number(text, expected):
    check(text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("5e", "5"), ("5 eggs", "5"), ("5e-", "5"), ("5e+x", "5"), ("5E.", "5")],
)
def test_an_e_without_digits_is_not_an_exponent(text, expected):
    check(text, expected)


# --- which number is the answer --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("First 1, then 2, finally 3.", "3"),
        ("3 apples and 4 pears", "4"),
        ("-1 and -2", "-2"),
        ("50%", "50"),
        ("12:30", "30"),
        ("1\n2\n", "2"),
        ("\u22125\u00a0kg", "-5"),
    ],
)
def test_the_last_number_in_the_text_is_the_answer(text, expected):
    check(text, expected)


def test_last_number_ignores_trailing_non_ascii_digits():
    check("5 and \u0663", "5")
    check("x\u06634", "4")


# --- the fast scan agrees with the plain definition ------------------------------------------

NUMBERISH = st.text(alphabet="0123456789,.eE+-\u2212 xZ\u0663é\n", max_size=24)


@settings(max_examples=2000, deadline=None)
@given(NUMBERISH, st.text(max_size=6))
def test_scanning_only_the_last_digits_run_finds_what_a_full_scan_finds(text, tail):
    # last_number starts at the run around the last digit; the definition scans everything.
    assert last_number(text + tail) == _last_number_by_full_scan(text + tail)
