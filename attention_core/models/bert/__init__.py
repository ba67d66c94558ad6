"""The BERT family (all-MiniLM-L6-v2, an encoder): config and loading from a sentence-transformers
folder (``model``), its weights (``weights``) and its forward pass (``forward``)."""
