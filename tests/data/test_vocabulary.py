from posbias.data.vocabulary import template_words, vocabulary_entity_words


def test_entity_words_are_single_tokens_outside_the_templates(tokenizer):
    words = vocabulary_entity_words(tokenizer)
    assert len(words) > 1000
    reserved = template_words()
    assert {"capital", "founded", "currency", "harbour"} <= reserved
    assert not reserved & set(words)
    for word in words[::200]:
        assert tokenizer.tokenize(word) == [word]
