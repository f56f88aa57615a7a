"""``python -m rag_compare`` runs the command line."""

from rag_compare.cli.main import main

main()
