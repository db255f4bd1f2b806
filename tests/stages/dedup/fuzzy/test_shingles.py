"""Text to shingles: normalisation, words, letter shingles, batches."""

import numpy as np

from gristmill.stages.dedup.fuzzy import shingles as ms
from gristmill.stages.dedup.fuzzy.shingles import shingle_batch, shingle_hashes
from gristmill.stages.dedup.minhash import core as mh

RNG = np.random.RandomState(3)
VOCAB = [f"w{i}" for i in range(5000)]


def words(n: int) -> list[str]:
    return [VOCAB[i] for i in RNG.randint(0, len(VOCAB), n)]


def shingle_set(text: str, **kw) -> np.ndarray:
    return np.unique(shingle_hashes(text, **kw)[0])


def test_text_without_shingles_gets_the_empty_signature():
    sh, _ = shingle_hashes(" ... --- !!! ")
    assert len(sh) == 0
    assert (mh.signatures_of([sh], mh.permutations(16, 1)) == 0xFFFFFFFF).all()


def test_shingles_ignore_case_punctuation_whitespace_and_compatibility_forms():
    a = shingle_set("The quick brown fox, jumps over the lazy dog!")
    assert np.array_equal(a, shingle_set("the QUICK brown fox jumps -- over the\n\nlazy dog"))
    assert np.array_equal(a, shingle_set("Ｔｈｅ quick brown fox jumps over the lazy dog"))
    assert not np.array_equal(a, shingle_set("The quick brown fox jumps over the lazy cat"))
    assert not np.array_equal(a, shingle_set("quick The brown fox jumps over the lazy dog"))
    # composed and decomposed accents are one letter
    assert np.array_equal(shingle_set("café au lait"), shingle_set("cafe\u0301 au lait"))
    # word boundaries matter: "ab cd" is not "abc d"
    assert not np.array_equal(shingle_set("ab cd", n_words=2), shingle_set("abc d", n_words=2))


def test_shingle_counts_words_and_letters():
    sh, letters = shingle_hashes(" ".join(words(12)), n_words=5)
    assert (len(sh), letters) == (8, False)
    assert len(shingle_hashes("only three words", n_words=5)[0]) == 1
    # Chinese has no spaces: letter 3-grams in auto mode
    sh, letters = shingle_hashes("我们今天去公园散步。", n_chars=3)
    assert (len(sh), letters) == (7, True)
    assert shingle_hashes("Hello world and more words", mode="char", n_chars=3)[1]
    assert not shingle_hashes("我们今天去公园散步。", mode="word")[1]


def test_a_batch_gives_each_text_what_it_gets_alone():
    texts = [
        " ".join(words(300)),
        "",
        "Ｆｕｌｌ-width and café with an accent",  # needs NFKC
        "我们今天去公园散步，然后回家吃饭。" * 3,  # letter shingles
        "two words",
        " ".join(words(3000)),  # spans blocks of the signature kernel
        "... !!!",
        "ΟΔΟΣ final sigma",
    ]
    hashes, offsets, by_letters = shingle_batch(texts)
    alone = [shingle_hashes(t) for t in texts]
    for i, (sh, letters) in enumerate(alone):
        np.testing.assert_array_equal(hashes[offsets[i] : offsets[i + 1]], sh)
        assert by_letters[i] == letters
    assert by_letters.tolist() == [False, False, False, True, False, False, False, False]
    perms = mh.permutations(64, 2)
    np.testing.assert_array_equal(
        mh.signatures(hashes, offsets, perms), mh.signatures_of([s for s, _ in alone], perms)
    )
    for i in (0, 3, 5):
        single = np.zeros(2, dtype=np.int64)
        single[1] = len(alone[i][0])
        np.testing.assert_array_equal(
            mh.signatures(alone[i][0], single, perms)[0], mh.signatures(hashes, offsets, perms)[i]
        )


def test_word_hashes_depend_on_letter_order_only_within_a_word():
    a = shingle_set("stop pots tops spot opts", n_words=1)
    assert len(a) == 5  # anagrams are different words
    assert set(shingle_set("stop", n_words=1)) <= set(a)
    assert shingle_hashes("stop", n_words=1)[0][0] == shingle_hashes("  stop!", n_words=1)[0][0]


def test_runs_of_a_long_batch_join_up(monkeypatch):
    texts = [" ".join(words(k)) for k in (50, 0, 7, 400, 3, 120)] + ["我们今天去公园散步。" * 5]
    whole = shingle_batch(texts)
    monkeypatch.setattr(ms, "CHUNK_CHARS", 300)  # a run every text or two
    runs = shingle_batch(texts)
    for got, want in zip(runs, whole, strict=True):
        np.testing.assert_array_equal(got, want)
