"""SPEC §2 quantities, read literally: a decimal number with an optional
suffix, turned into an integer in the resource's internal unit (cpu:
millicores, memory: bytes, anything else: milli-units)."""

from fractions import Fraction
import re

_SUFFIX = {
    "": Fraction(1), "c": Fraction(1), "m": Fraction(1, 1000),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9),
    "T": Fraction(10**12), "P": Fraction(10**15), "E": Fraction(10**18),
    "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30),
    "Ti": Fraction(2**40), "Pi": Fraction(2**50), "Ei": Fraction(2**60),
}
_GRAMMAR = re.compile(r"^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)([a-zA-Z]*)$")


def unit_per_one(resource):
    """How many internal units one whole unit of `resource` is."""
    return 1 if resource == "memory" else 1000


def parse(resource, text):
    """Integer amount of `resource` named by `text`; ValueError otherwise."""
    text = str(text).strip()
    match = _GRAMMAR.match(text)
    if not match or match.group(2) not in _SUFFIX:
        raise ValueError(f"bad quantity {text!r}")
    amount = Fraction(match.group(1)) * _SUFFIX[match.group(2)] * unit_per_one(resource)
    if amount.denominator != 1:
        raise ValueError(f"quantity {text!r} is finer than one unit of {resource}")
    return int(amount)
