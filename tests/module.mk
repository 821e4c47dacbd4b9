# tests/module.mk — cross-component suites that no single module owns.
# The report corpus: committed traces and the outputs the report must give
# for them, byte for byte (tests/corpus/make-corpus.sh says how to rebuild).
TESTS += tests/corpus/test_report_corpus.sh
