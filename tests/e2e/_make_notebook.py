"""Writes the notebook tests/e2e/notebook.sh reads and edits: nbformat 4.5,
with cell ids, a stream output, an execute_result, an error whose traceback
is coloured with terminal escapes, and a PNG display_data."""
import json
import sys

nb = {
    "cells": [
        {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Sales\n", "Load the data."]},
        {"cell_type": "code", "execution_count": 1, "id": "load", "metadata": {"tags": ["keep"]},
         "outputs": [{"name": "stdout", "output_type": "stream", "text": ["loaded 42 rows\n"]},
                     {"data": {"text/plain": ["42"]}, "execution_count": 1, "metadata": {},
                      "output_type": "execute_result"}],
         "source": ["rows = load()\n", "print(f'loaded {len(rows)} rows')\n", "len(rows)"]},
        {"cell_type": "code", "execution_count": 2, "id": "plot", "metadata": {},
         "outputs": [{"data": {"image/png": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
                               "text/plain": ["<Figure size 640x480>"]},
                      "metadata": {}, "output_type": "display_data"}],
         "source": "plot(rows)"},
        {"cell_type": "code", "execution_count": 3, "id": "fail", "metadata": {},
         "outputs": [{"ename": "ZeroDivisionError", "evalue": "division by zero", "output_type": "error",
                      "traceback": ["\u001b[0;31mZeroDivisionError\u001b[0m: division by zero"]}],
         "source": ["1/0"]},
    ],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                 "language_info": {"name": "python"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}
with open(sys.argv[1], "w", encoding="utf-8") as f:
    json.dump(nb, f, indent=1)
    f.write("\n")
