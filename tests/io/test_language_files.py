"""The shipped language files (``rag_compare/io/languages/*.toml``) and ``load_language``'s refusals.

Abstentions are written as users write them (curly apostrophes, no-break spaces, capitals, dropped
accents) and read through ``words.normalized``, as the judge reads them; patterns run on Polars (Rust
regex), as the judge runs them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import polars as pl
import pytest

from rag_compare.compute.words import WORD_PATTERN, fold_plural, normalized
from rag_compare.core.errors import ConfigError
from rag_compare.io.language_rules import PART_KEYS, Language, builtin_languages, load_language
from tests.helpers.language_samples import SAMPLES

LANGUAGES = {language.code: language for language in builtin_languages()}
NBSP, NNBSP = "\u00a0", "\u202f"  # a no-break space, a narrow no-break space

ABSTENTIONS = {
    "en": [
        "I don\u2019t know.",
        "I'm sorry, but I can't help with that.",
        "There is no information about parking in the handbook.",
        f"I have no information{NBSP}on that topic.",
        "The context doesn\u2019t say how long it takes.",
        "I'm unable to answer this from the passages.",
        "The documents make no mention of a deadline.",
        "This is not covered in the provided documents.",
    ],
    "de": [
        "Ich weiß es leider nicht.",
        "Das weiß ich nicht.",
        f"Keine{NBSP}Ahnung.",
        "Ich bin mir nicht sicher.",
        "Das kann ich Ihnen leider nicht sagen.",
        "Diese Frage lässt sich anhand des Kontexts nicht beantworten.",
        "Dazu liegen mir keine Informationen vor.",
        "Der Kontext enthält keine Informationen über Haustiere.",
        "Die Frist wird im Handbuch nicht erwähnt.",
        "Das geht aus dem Text nicht hervor.",
        "Ich konnte dazu leider nichts finden.",
        "Dem Handbuch ist das nicht zu entnehmen.",
        "Im Text steht dazu nichts.",
    ],
    "fr": [
        "Je ne sais pas.",
        "J\u2019sais pas.",
        "Je n\u2019en sais rien.",
        f"Je ne suis pas sûre{NNBSP}!",
        "Je ne peux pas vous répondre.",
        "Je ne peux pas repondre a cette question.",
        "Je n'ai pas d'information sur ce point.",
        "Aucune information sur ce sujet dans le document.",
        "Ce n\u2019est pas mentionné dans le contexte.",
        "Le contexte ne précise pas le délai.",
        "Je n'ai rien trouvé à ce sujet.",
        "Je ne suis pas en mesure de le dire.",
    ],
    "es": [
        "No lo sé.",
        "No lo se.",
        "No sé.",
        "Ni idea.",
        "No estoy seguro.",
        "No puedo responder a esa pregunta.",
        "No hay información sobre ese tema.",
        "No tengo información suficiente.",
        "El contexto no menciona el plazo.",
        "No se especifica en el documento.",
        "No he podido encontrar nada al respecto.",
        "Lo desconozco.",
        "No sabría decirle.",
    ],
    "it": [
        "Non lo so.",
        "Non so.",
        "Non saprei.",
        "Non ne sono sicuro.",
        "Non posso rispondere a questa domanda.",
        "Non ho informazioni su questo argomento.",
        "Non c\u2019è nessuna informazione al riguardo.",
        "Il contesto non menziona la scadenza.",
        "La scadenza non viene specificata.",
        "Non l\u2019ho trovato nel documento.",
        "Non sono in grado di dirlo.",
        "Non ho idea.",
        "Non posso dirlo.",
    ],
    "pt": [
        "Não sei.",
        "Nao sei.",
        "Não faço ideia.",
        "Não tenho certeza.",
        "Não posso responder a essa pergunta.",
        "Não há informações sobre esse assunto.",
        "Nenhuma informação sobre isso.",
        "O contexto não menciona o prazo.",
        "O prazo não é mencionado no documento.",
        "Não consegui encontrar essa informação.",
        "Desconheço.",
        "Sei lá.",
    ],
    "nl": [
        "Ik weet het niet.",
        "Dat weet ik niet.",
        "Geen idee.",
        "Ik ben er niet zeker van.",
        "Die vraag kan ik helaas niet beantwoorden.",
        "Daar kan ik niets over zeggen.",
        "Ik heb geen informatie over dat onderwerp.",
        "De context bevat geen informatie over huisdieren.",
        "Dat wordt niet vermeld in het document.",
        "Ik kon het antwoord niet vinden.",
        "Ik ben niet in staat om dat te bepalen.",
        f"Geen{NBSP}informatie gevonden.",
    ],
}

NEGATIVE_ANSWERS = {
    "en": [
        "No, pets are not allowed.",
        "There is no fee for a replacement card.",
        "You cannot cancel after the deadline.",
        "The deposit is not refundable.",
        "No, the form does not need a signature.",
        "I'm afraid not: the office is closed on Sundays.",
        "No information is shared with third parties.",
    ],
    "de": [
        "Nein, Haustiere sind nicht erlaubt.",
        "Nein, das ist nicht möglich.",
        "Die Gebühr wird nicht erstattet.",
        "Es gibt keine Gebühr.",
        "Nein, dafür brauchen Sie keine Genehmigung.",
        "Das Büro ist sonntags nicht geöffnet.",
        "Dem steht nichts entgegen.",
        "Sie haben keine Angaben gemacht.",
    ],
    "fr": [
        "Non, ce n\u2019est pas remboursé.",
        "Non, les animaux ne sont pas acceptés.",
        "Il n'y a pas de frais.",
        "Non, vous n'avez pas besoin de réserver.",
        "Ce n'est pas possible après la date limite.",
        "Aucun frais n'est demandé.",
        "Non, vous n'avez rien à faire.",
    ],
    "es": [
        "No, no está permitido.",
        "No, no se permiten mascotas.",
        "No se cobra ninguna tarifa.",
        "No, el reembolso no es posible.",
        "No hace falta reservar.",
        "No se puede cancelar después del plazo.",
        "No hay ninguna excepción.",
    ],
    "it": [
        "No, gli animali non sono ammessi.",
        "No, non è rimborsabile.",
        "Non è necessario prenotare.",
        "No, non è possibile.",
        "Non ci sono costi aggiuntivi.",
        "Il servizio non è disponibile la domenica.",
        "No, non deve fare nulla.",
    ],
    "pt": [
        "Não, animais não são permitidos.",
        "Não, não é reembolsável.",
        "Não é necessário reservar.",
        "Não há taxa de cancelamento.",
        "Não, não pode cancelar depois do prazo.",
        "O escritório não abre ao domingo.",
        "Não há exceções.",
    ],
    "nl": [
        "Nee, huisdieren zijn niet toegestaan.",
        "Nee, dat wordt niet vergoed.",
        "Er zijn geen kosten.",
        "Nee, u hoeft niet te reserveren.",
        "Annuleren is na de deadline niet mogelijk.",
        "Het kantoor is op zondag niet open.",
        "Nee, u hoeft niets te doen.",
        "Het formulier bevat geen persoonlijke gegevens.",
    ],
}

# Sample answers, each word sorted by hand: the content words carry the claim, the others do not.
SAMPLE_WORDS = {
    "en": (
        "The refund takes ten working days after we receive the form.",
        "refund takes ten working days receive form",
        "the after we",
    ),
    "de": (
        "Nein, Haustiere sind in den Wohnungen leider nicht erlaubt, auch wenn sie klein sind.",
        "haustiere wohnungen leider erlaubt klein",
        "nein sind in den nicht auch wenn sie",
    ),
    "fr": (
        "Non, le remboursement n'est pas possible après trente jours, sauf pour les abonnés.",
        "remboursement possible trente jours sauf abonnés",
        "non le n est pas après pour les",
    ),
    "es": (
        "Sí, los empleados pueden trabajar desde casa dos días por semana con la aprobación del jefe.",
        "empleados trabajar casa dos días semana aprobación jefe",
        "sí los pueden desde por con la del",
    ),
    "it": (
        "No, il rimborso non è previsto per gli ordini già spediti dal magazzino.",
        "rimborso previsto ordini spediti magazzino",
        "no il non è per gli già dal",
    ),
    "pt": (
        "Não, o reembolso só é possível nos primeiros trinta dias após a compra.",
        "reembolso possível primeiros trinta dias compra",
        "não o só é nos após",
    ),
    "nl": (
        "Nee, medewerkers mogen hun auto niet op het terrein parkeren na acht uur.",
        "medewerkers auto terrein parkeren acht uur",
        "nee mogen hun niet op het na",
    ),
}

# (answer word, context word) pairs one language's suffixes must make one word, by the judge's rule: the
# answer word loses its longest suffix (three characters or more remaining) and the context word is that
# stem, or that stem and one of the suffixes.
SAME_WORDS = {
    "de": [
        ("Regeln", "Regel"),
        ("Tage", "Tagen"),
        ("Kindern", "Kind"),
        ("Preises", "Preis"),
        ("Studentinnen", "Studentin"),
    ],
    "fr": [("règles", "règle"), ("bureaux", "bureau"), ("prix", "prix")],
    "es": [("reglas", "regla"), ("meses", "mes"), ("ciudades", "ciudad"), ("clases", "clase"), ("clase", "clases")],
    "it": [("regole", "regola"), ("giorni", "giorno"), ("negozi", "negozio"), ("negozio", "negozi")],
    "pt": [("regras", "regra"), ("cidades", "cidade"), ("cidade", "cidades")],
    "nl": [("regels", "regel"), ("dagen", "dag"), ("boeken", "boek")],
}


def matching(texts: list[str], patterns: tuple[str, ...]) -> list[bool]:
    read = normalized(pl.Series(texts, dtype=pl.String))
    return (
        pl.select(pl.any_horizontal(pl.lit(read).str.contains(pattern) for pattern in patterns)).to_series().to_list()
    )


def one_word(answer: str, context: str, suffixes: tuple[str, ...]) -> bool:
    words = normalized(pl.Series([answer, context]))
    stem = pl.select(fold_plural(pl.lit(words.head(1)), suffixes)).item()
    return words[1] in {stem, *(stem + suffix for suffix in suffixes)}


def shipped_text(code: str) -> str:
    return resources.files("rag_compare.io").joinpath("languages", f"{code}.toml").read_text(encoding="utf-8")


def test_the_package_ships_seven_languages() -> None:
    assert sorted(LANGUAGES) == ["de", "en", "es", "fr", "it", "nl", "pt"]
    assert {code: language.decimal_separator for code, language in LANGUAGES.items()} == {
        "de": ",", "en": ".", "es": ",", "fr": ",", "it": ",", "nl": ",", "pt": ",",
    }  # fmt: skip
    assert {code: language.letters for code, language in LANGUAGES.items()}["de"] == "äöü"


@pytest.mark.parametrize("code", sorted(ABSTENTIONS))
def test_each_language_recognises_its_own_abstentions(code: str) -> None:
    texts = ABSTENTIONS[code]
    recognised = matching(texts, LANGUAGES[code].abstention_patterns)
    assert [text for text, found in zip(texts, recognised, strict=True) if not found] == []


@pytest.mark.parametrize("code", sorted(NEGATIVE_ANSWERS))
def test_a_plain_negative_answer_matches_no_language_s_patterns(code: str) -> None:
    texts = NEGATIVE_ANSWERS[code]
    for language in LANGUAGES.values():
        matched = matching(texts, language.abstention_patterns)
        assert [text for text, found in zip(texts, matched, strict=True) if found] == [], language.code


@pytest.mark.parametrize("code", sorted(LANGUAGES))
def test_stopwords_are_function_words_written_as_the_judge_reads_them(code: str) -> None:
    stopwords = LANGUAGES[code].stopwords
    answer, content, function = SAMPLE_WORDS[code]
    words = normalized(pl.Series([answer])).str.extract_all(WORD_PATTERN).explode().to_list()
    assert {word for word in words if len(word) > 1} == {
        word for word in (content + " " + function).split() if len(word) > 1
    }
    assert set(content.split()) & set(stopwords) == set()
    assert set(function.split()) - set(stopwords) == set()
    if code != "en":
        assert 150 <= len(stopwords) <= 300
    assert list(normalized(pl.Series(stopwords, dtype=pl.String))) == list(stopwords)


@pytest.mark.parametrize("code", sorted(SAME_WORDS))
def test_plural_suffixes_make_a_plural_and_its_singular_one_word(code: str) -> None:
    suffixes = LANGUAGES[code].plural_suffixes
    assert [pair for pair in SAME_WORDS[code] if not one_word(*pair, suffixes)] == []
    assert not one_word(SAME_WORDS[code][0][0], "zzzz", suffixes)


def test_a_user_file_replaces_a_shipped_language(tmp_path: Path) -> None:
    path = tmp_path / "de.toml"
    text = shipped_text("de").replace('name = "German"', 'name = "Swiss German"')
    path.write_text(text.replace('stopwords = """\n', 'stopwords = """\ngrüezi\n'), encoding="utf-8")
    language = load_language(path)
    assert isinstance(language, Language)
    assert (language.code, language.name) == ("de", "Swiss German")
    assert set(language.stopwords) - set(LANGUAGES["de"].stopwords) == {"grüezi"}
    assert language.abstention_patterns == LANGUAGES["de"].abstention_patterns


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda text: text.replace('name = "English"\n', ""), "name"),
        (lambda text: text + 'dialect = "US"\n', "dialect"),
        (lambda text: text.replace(r"'''\bnot mentioned\b'''", r"'''\bnot (mentioned'''"), "abstention_patterns"),
        (lambda text: text.replace('code = "en"', 'code = "English"'), "code"),
        (lambda text: text.replace('code = "en"', 'code = "EN"'), "code"),
        (lambda text: text.replace('decimal_separator = "."', 'decimal_separator = "·"'), "decimal_separator"),
        (lambda text: text.replace('plural_suffixes = ["s"]', 'plural_suffixes = ["-s"]'), "plural_suffixes"),
        (lambda text: text.replace('letters = ""', 'letters = "Ä"'), "letters"),
        (lambda text: text.replace("[abstention_parts]", "[abstention_parts]\nnegatives = 'no'"), "abstention_parts"),
        (lambda text: text.replace('nouns = """\n', 'nouns = """\nContext*\n'), "abstention_parts.nouns"),
        (lambda text: text.replace('verbs = """\n', 'verbs = """\ncon*tain\n'), "abstention_parts.verbs"),
        (lambda text: re.sub(r'negations = """[^"]*"""', 'negations = ""', text), "abstention_parts.negations"),
        (lambda text: text.split("[abstention_parts]")[0] + "abstention_parts = 1\n", "abstention_parts"),
        (lambda text: text.replace('capitals = "names"', 'capitals = "all"'), "names.capitals"),
        (lambda text: text + "piece = 3\n", "names.piece"),
        (lambda text: text + 'cues = "ms*"\n', "names.cues"),
        (lambda text: text + 'endings = ["burg"]\n', "names.endings"),
        (lambda text: text.replace('capitals = "names"', 'capital = "names"'), "names"),
    ],
)
def test_a_language_file_it_cannot_use_is_refused_naming_the_file_and_the_key(
    tmp_path: Path, change: Callable[[str], str], named: str
) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(change(shipped_text("en")), encoding="utf-8")
    with pytest.raises(ConfigError) as excinfo:
        load_language(path)
    assert str(path) in str(excinfo.value)
    assert named in str(excinfo.value)


def test_abstention_parts_and_names_are_each_languages_and_optional(tmp_path: Path) -> None:
    for language in LANGUAGES.values():
        assert language.abstention_parts is not None, language.code
        assert language.names is not None, language.code
        assert all(getattr(language.abstention_parts, key) for key in PART_KEYS), language.code
    assert {code: language.names.capitals for code, language in LANGUAGES.items() if language.names} == {
        "de": "nouns", "en": "names", "es": "names", "fr": "names", "it": "names", "nl": "names", "pt": "names",
    }  # fmt: skip
    path = tmp_path / "en.toml"  # a file written before either table: patterns alone, no names
    path.write_text(shipped_text("en").split("\n# Abstention by parts")[0], encoding="utf-8")
    language = load_language(path)
    assert (language.abstention_parts, language.names) == (None, None)
    assert language.config["abstention_parts"] is None


def test_a_language_file_that_is_not_utf8_or_not_a_file_is_refused(tmp_path: Path) -> None:
    latin1 = tmp_path / "de.toml"
    latin1.write_bytes(shipped_text("de").encode("utf-8").replace("ü".encode(), "ü".encode("latin-1")))
    with pytest.raises(ConfigError, match=re.escape(f"{latin1}: is not UTF-8")):
        load_language(latin1)
    for not_a_file, found in ((tmp_path / "absent.toml", "no such language file"), (tmp_path, "is a folder")):
        with pytest.raises(ConfigError, match=re.escape(f"{not_a_file}: {found}")):
            load_language(not_a_file)


def test_of_the_detection_samples_only_those_that_say_they_do_not_know_abstain() -> None:
    every_pattern = tuple(pattern for language in LANGUAGES.values() for pattern in language.abstention_patterns)
    texts = [text for _, text in SAMPLES]
    abstaining = [text for text, found in zip(texts, matching(texts, every_pattern), strict=True) if found]
    assert abstaining == [
        "I don't know.",
        "Ich weiß es nicht.",
        "Je ne sais pas.",
        "No lo sé.",
        "Non lo so.",
        "Não sei.",
        "Ik weet het niet.",
    ]
