"""Running models on this machine: the models config, weight sources, the torch device, the embedded LLM, embeddings, fine-tuning."""
