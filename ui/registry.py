"""Every page of the app, once: its file in pages/, title, icon and the line Start here shows.

navigation.py builds the navigation from it, Start here its map of the pages, the tour its "Explore
further" links and the benchmarks their page lists; a new page is one entry here (and its file)."""

from __future__ import annotations

from dataclasses import dataclass

from ui.tour import N_STEPS

TEXT_MODELS = ("minilm", "smollm2")  # the models a page on typed text shows
# Where the sidebar's picker takes a visitor who picks a model the page cannot show.
MODEL_HOMES = {"minilm": "pattern", "smollm2": "decoder", "whisper": "listen"}


@dataclass(frozen=True)
class PageInfo:
    """One page: ``pages/<name>.py``, served at ``/<name>`` (Start here at ``/``)."""

    name: str  # the file stem and URL path
    title: str  # navigation label and link text
    icon: str  # Streamlit material icon
    blurb: str  # one line on Start here ("" for Start here itself)
    models: tuple[str, ...] = TEXT_MODELS  # what it can show, the one it opens on first

    @property
    def path(self) -> str:
        return f"pages/{self.name}.py"

    @property
    def url_path(self) -> str:
        """Where Streamlit serves it: "" for the default page, else its name."""
        return "" if self is PAGES[0] else self.name


PAGES: tuple[PageInfo, ...] = (
    PageInfo("home", "Start here", ":material/home:", ""),
    PageInfo(
        "learn",
        "Learn step by step",
        ":material/school:",
        f"New to Q, K and V? A guided tour of all of it, {N_STEPS} short steps, on your sentence.",
        ("minilm",),
    ),
    PageInfo(
        "notes",
        "The notes' examples",
        ":material/menu_book:",
        "Each example of the notes run on the real models, beside the notes' own numbers.",
    ),
    PageInfo(
        "pattern",
        "Attention pattern",
        ":material/grid_on:",
        "One head: scores → scaled → masked → softmax, and the arithmetic behind any cell.",
    ),
    PageInfo(
        "all_heads",
        "All heads",
        ":material/apps:",
        "Every head of every layer at once, sorted by what it attends to; click one to open it.",
    ),
    PageInfo(
        "values",
        "Value updates ΔE",
        ":material/add_circle:",
        "How the weights blend value vectors into the update each head proposes.",
    ),
    PageInfo(
        "embedding_shift",
        "Embedding shift",
        ":material/scatter_plot:",
        "Watch each token's vector move with context, layer by layer, next to probe words.",
    ),
    PageInfo(
        "hide_word",
        "What did that word do?",
        ":material/visibility_off:",
        "Hide one word from the others and measure what another word's vector loses.",
    ),
    PageInfo(
        "beyond",
        "Beyond the weights",
        ":material/insights:",
        "What each head really moves, how the layers mix tokens, what the model does without a "
        "head, and a decoder's guess after every layer.",
    ),
    PageInfo(
        "build_head",
        "Build your own head",
        ":material/tune:",
        "Choose heads, d_k, weights and masks; see why scores are divided by √d_k.",
    ),
    PageInfo(
        "compare",
        "Compare sentences",
        ":material/compare_arrows:",
        "Two sentences on the same head; the same word's vector compared layer by layer.",
    ),
    PageInfo(
        "decoder",
        "Inside a decoder",
        ":material/arrow_forward:",
        "SmolLM2, a real decoder: each token sees only itself and the ones before it; rotary "
        "positions, shared key/value heads, the next-token guesses.",
        ("smollm2",),
    ),
    PageInfo(
        "generate",
        "Generate, token by token",
        ":material/play_arrow:",
        "Step SmolLM2 through writing text: each new token's attention and the model's top "
        "guesses for the next.",
        ("smollm2",),
    ),
    PageInfo(
        "long_text",
        "Long text",
        ":material/article:",
        "SmolLM2 over a whole page: how much weight each head puts on the first token, how far "
        "back it reads along the text, and what a longer text costs.",
        ("smollm2",),
    ),
    PageInfo(
        "listen",
        "Listen: cross-attention",
        ":material/graphic_eq:",
        "Whisper writes down speech (yours, a clip or typed text): each written word shows the "
        "moment of the audio it listened to.",
        ("whisper",),
    ),
    PageInfo(
        "glossary",
        "Glossary",
        ":material/dictionary:",
        "Every word the pages use, each in one plain sentence (the same one the pages show "
        "when you hover the ? beside a word's first use).",
    ),
)


def page(name: str) -> PageInfo:
    """The page called ``name``; KeyError if there is none."""
    for info in PAGES:
        if info.name == name:
            return info
    raise KeyError(f"no page {name!r}; pages: {', '.join(p.name for p in PAGES)}")
