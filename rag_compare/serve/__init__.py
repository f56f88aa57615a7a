"""The review server: the interactive page and its JSON API over one comparison and a review database."""
