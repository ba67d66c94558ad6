"""Sentences shared by the exactness tests: plain, punctuation, digits, accents, emoji, CJK, long.

``LONG_200`` tokenizes to between 200 and 256 tokens (inside sentence-transformers' window) and
``LONG_256`` to between 256 and 512 (past that window, inside the model's 512 positions).
"""

_PARAGRAPH = (
    "The river bank was muddy after the storm, so the children walked along the old stone "
    "bridge instead. Their teacher had told them that water always finds the lowest path, and "
    "that the town grew up here because boats could carry grain and timber to the sea. "
)

LONG_200 = _PARAGRAPH * 4 + "The end."  # 4 x 51 pieces + [CLS], "the end." and [SEP]
LONG_256 = _PARAGRAPH * 6 + "Then everyone went home."

SENTENCES = {
    "plain": "The river bank was muddy after the storm.",
    "punctuation": "Wait... what?! (Yes, really) -- 'quoted' \"text\"; ok: done/undone & more.",
    "digits": "In 1969, 3 astronauts flew 384,400 km at 11.2 km/s on 20.07.1969 at 20:17.",
    "accents": "The café served a naïve crème brûlée in Zürich, São Paulo and Kraków.",
    "emoji": "I love pizza 🍕 and rockets 🚀!! 👍🏽 ok",
    "cjk": "東京は日本の首都です。北京是中国的首都。서울은 한국의 수도입니다.",
    "long_200": LONG_200,
    "long_256": LONG_256,
}
