"""Properties of answers: no answer crosses principals through the cache, and no generated
Brazilian identifier survives into an answer or its citations."""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.answer.test_pii import _card, _cnpj, _cpf
from trilha.access import Principal
from trilha.answer import ask
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

principals = st.builds(
    Principal,
    user_id=st.sampled_from([None, "ana", "bruno"]),
    org_ids=st.lists(st.sampled_from(["acme", "beta"]), max_size=2, unique=True),
    roles=st.lists(st.sampled_from(["board", "finance", "it"]), max_size=2, unique=True),
    hierarchy_level=st.integers(0, 3),
    clearance=st.integers(0, 2),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(first=principals, second=principals)
def test_a_cached_answer_is_served_only_to_the_same_principal(
    sample_ws: Workspace, first: Principal, second: Principal
) -> None:
    # a question of its own: hypothesis may run an example twice (shrinking, replays)
    question = f"Quantas cotações exige uma compra? ({uuid.uuid4().hex})"
    ask(sample_ws, question, principal=first)
    again = ask(sample_ws, question, principal=second)
    assert again.trace.cache_hit == (first == second)
    if again.trace.cache_hit:
        assert again.trace.principal == first.describe()


@pytest.fixture(scope="module")
def pii_ws(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Iterator[tuple[Workspace, list[str]]]:
    """Twenty records, each holding generated identifiers in several formats."""
    rnd = random.Random(7)
    docs, secrets = [], []
    for n in range(20):
        cpf = _cpf([rnd.randrange(10) for _ in range(9)])
        cnpj = _cnpj([rnd.randrange(10) for _ in range(12)])
        card = _card([4, *[rnd.randrange(10) for _ in range(14)]])
        phone = f"{rnd.randrange(11, 99)} 9{rnd.randrange(1000, 9999)}-{rnd.randrange(1000, 9999)}"
        email = f"cliente{n}@empresa{n}.com.br"
        shown_cpf = cpf if n % 2 else f"{cpf[:3]}.{cpf[3:6]}.{cpf[6:9]}-{cpf[9:]}"
        shown_cnpj = (
            cnpj if n % 3 else f"{cnpj[:2]}.{cnpj[2:5]}.{cnpj[5:8]}/{cnpj[8:12]}-{cnpj[12:]}"
        )
        text = (
            f"Cadastro do cliente {n}. O cliente {n} tem CPF {shown_cpf} e a empresa CNPJ "
            f"{shown_cnpj}. Contato do cliente {n}: {email}, telefone ({phone[:2]}) {phone[3:]}. "
            f"O cartão do cliente {n} é {' '.join(card[i : i + 4] for i in range(0, 16, 4))}."
        )
        docs.append(SourceDocument(doc_id=f"cliente-{n}", text=text, meta={"lang": "pt"}))
        secrets += [cpf, cnpj, card, phone[3:].replace("-", ""), email]
    folder = tmp_path_factory.mktemp("pii") / "ws"
    ws = Workspace.open(folder, TrilhaSettings(), embedder=embedder, create=True)
    ws.ingest(docs)
    yield ws, secrets
    ws.close()


@pytest.mark.parametrize(
    "question",
    ["Qual é o CPF do cliente 3?", "Qual o contato e o telefone do cliente 8?",
     "Qual é o cartão do cliente 11?", "Qual o CNPJ da empresa do cliente 15?",
     "Dados de cadastro dos clientes"],
)  # fmt: skip
def test_no_generated_identifier_reaches_an_answer(
    pii_ws: tuple[Workspace, list[str]], question: str
) -> None:
    ws, secrets = pii_ws
    answer = ask(ws, question, k=20, top_n=20)
    assert answer.answered and answer.citations
    dumped = answer.model_dump_json()
    for secret in secrets:
        if "@" in secret:
            assert secret not in dumped
        else:  # the digits in order, whatever separators the text put between them
            assert not re.search(r"[.\-/ ]?".join(secret), dumped), secret
    assert sum(answer.trace.pii_masked.values()) > 0
