"""Personal data masking: check digits, shapes, and a generated corpus of Brazilian identifiers."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trilha.answer.pii import cnpj_valid, cpf_valid, luhn_valid, mask_pii


def _cpf(digits9: list[int]) -> str:
    d = list(digits9)
    for n in (9, 10):
        total = sum(v * w for v, w in zip(d, range(n + 1, 1, -1), strict=False))
        d.append(total * 10 % 11 % 10)
    return "".join(map(str, d))


def _cnpj(digits12: list[int]) -> str:
    d = list(digits12)
    weights = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
    for w in (weights, [6, *weights]):
        rest = sum(v * x for v, x in zip(d, w, strict=False)) % 11
        d.append(0 if rest < 2 else 11 - rest)
    return "".join(map(str, d))


def _card(digits: list[int]) -> str:
    body = list(digits)
    total = 0
    for i, v in enumerate(reversed(body)):
        if i % 2 == 0:
            v = v * 2 - 9 if v > 4 else v * 2
        total += v
    return "".join(map(str, [*body, (10 - total % 10) % 10]))


def test_check_digits_of_known_identifiers() -> None:
    assert cpf_valid("529.982.247-25") and cpf_valid("52998224725")
    assert not cpf_valid("529.982.247-26") and not cpf_valid("111.111.111-11")
    assert cnpj_valid("11.222.333/0001-81") and not cnpj_valid("11.222.333/0001-82")
    assert luhn_valid("4111 1111 1111 1111") and not luhn_valid("4111 1111 1111 1112")


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("CPF 529.982.247-25.", "[CPF]"),
        ("cpf 52998224725 no cadastro", "[CPF]"),
        ("CNPJ 11.222.333/0001-81", "[CNPJ]"),
        ("CNPJ 11222333000181", "[CNPJ]"),
        ("RG: 12.345.678-9", "[RG]"),
        ("RG nº 123456789", "[RG]"),
        ("escreva para ana.silva+rh@empresa.com.br hoje", "[EMAIL]"),
        ("ligue (11) 98765-4321", "[TELEFONE]"),
        ("ligue +55 11 3333-4444", "[TELEFONE]"),
        ("celular 98765-4321", "[TELEFONE]"),
        ("cartão 4111 1111 1111 1111", "[CARTAO]"),
        ("card 4111111111111111", "[CARTAO]"),
    ],
)
def test_each_kind_is_masked(text: str, label: str) -> None:
    masked = mask_pii(text)
    assert label in masked.text and masked.counts[label] == 1
    assert not re.search(r"\d{4}", masked.text.replace("+55", "")), masked.text


@pytest.mark.parametrize(
    "text",
    [
        "Lei 13.709/2018, art. 206, § 5º, do CC",
        "REsp 1.234.567/SP, processo 0001234-56.2020.8.26.0100",
        "entre 2019-2020, R$ 2.000,00 em 10/05/2021",
        "o número 12345678901 não é CPF válido",
        "Law No. 9,609/1998 and 212 workstations",
    ],
)
def test_legal_numbers_dates_and_money_are_left_alone(text: str) -> None:
    assert mask_pii(text).text == text


_FORMATS = {
    "cpf": lambda d: [d, f"{d[:3]}.{d[3:6]}.{d[6:9]}-{d[9:]}", f"{d[:9]}-{d[9:]}"],
    "cnpj": lambda d: [d, f"{d[:2]}.{d[2:5]}.{d[5:8]}/{d[8:12]}-{d[12:]}"],
    "card": lambda d: [d, " ".join(d[i : i + 4] for i in range(0, 16, 4))],
}


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(sorted(_FORMATS)),
    seed=st.integers(0, 2**32 - 1),
    lead=st.sampled_from(["O titular,", "Cliente:", "Segundo o cadastro", "(", "-"]),
    tail=st.sampled_from([".", ",", ";", ")", " consta no contrato.", ""]),
)
def test_generated_identifiers_never_survive(kind: str, seed: int, lead: str, tail: str) -> None:
    rnd = random.Random(seed)
    digits = [rnd.randrange(10) for _ in range({"cpf": 9, "cnpj": 12, "card": 15}[kind])]
    if len(set(digits)) == 1:
        digits[0] = (digits[0] + 1) % 10
    raw = {"cpf": _cpf, "cnpj": _cnpj, "card": _card}[kind](digits)
    for shown in _FORMATS[kind](raw):
        text = f"{lead} {shown}{tail}"
        out = mask_pii(text).text
        assert raw not in re.sub(r"\D", "", out), (text, out)


@settings(max_examples=200, deadline=None)
@given(
    user=st.from_regex(r"[a-z][a-z0-9._]{0,12}[a-z0-9]", fullmatch=True),
    host=st.from_regex(r"[a-z][a-z0-9\-]{0,10}[a-z0-9]", fullmatch=True),
    ddd=st.integers(11, 99),
    number=st.integers(10_000_000, 99_999_999),
)
def test_generated_emails_and_phones_never_survive(
    user: str, host: str, ddd: int, number: int
) -> None:
    n = str(number)
    email = f"{user}@{host}.com.br"
    phones = [f"({ddd}) 9{n[:4]}-{n[4:]}", f"+55 {ddd} {n[:4]}-{n[4:]}", f"9{n[:4]}-{n[4:]}"]
    for item in [email, *phones]:
        out = mask_pii(f"Contato: {item}, horário comercial.").text
        assert item not in out and n[4:] not in out, out
