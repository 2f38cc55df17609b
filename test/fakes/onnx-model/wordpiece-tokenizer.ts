// A WordPiece vocabulary and the tokenizer files of a lowercasing BERT (tokenizer.json in the Hugging Face
// tokenizers format, tokenizer_config.json), as a BERT export ships them. Every CJK ideograph of the basic
// block is a token, as in multilingual BERT, so Chinese texts give distinct ids instead of [UNK] runs.

export const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] as const;

// A few whole words so English text does not always fall apart into single letters.
const COMMON_WORDS = (
  'the of and to in is it that for on with as was by at be this are from or an not have has had but ' +
  'what all were when we there can if more one about so which their out up will do how they time two ' +
  'note notes block blocks search semantic index vector query page book notebook write read file model ' +
  'quick brown fox jumps over lazy dog hello world test data text embed embedding rank rerank local'
).split(' ');

export interface VocabularyOptions {
  /** Include the CJK Unified Ideographs block U+4E00–U+9FFF (20,992 tokens). */
  cjk: boolean;
}

/** Tokens in id order: specials, printable ASCII, `##` continuations, common words, then CJK ideographs. */
export function buildVocabulary(options: VocabularyOptions): string[] {
  const tokens: string[] = [...SPECIAL_TOKENS];
  const seen = new Set<string>(tokens);
  const add = (token: string) => {
    if (!seen.has(token)) {
      seen.add(token);
      tokens.push(token);
    }
  };
  for (let code = 33; code < 127; code++) add(String.fromCharCode(code).toLowerCase());
  for (let code = 33; code < 127; code++) add(`##${String.fromCharCode(code).toLowerCase()}`);
  for (const word of COMMON_WORDS) add(word);
  if (options.cjk) for (let code = 0x4e00; code <= 0x9fff; code++) add(String.fromCodePoint(code));
  return tokens;
}

export function tokenizerJson(vocabulary: readonly string[], maxLength: number): unknown {
  const idOf = (token: string) => {
    const id = vocabulary.indexOf(token);
    if (id < 0) throw new Error(`token ${token} missing from the vocabulary`);
    return id;
  };
  const special = (token: string, typeId: number) => ({ SpecialToken: { id: token, type_id: typeId } });
  return {
    version: '1.0',
    truncation: { direction: 'Right', max_length: maxLength, strategy: 'LongestFirst', stride: 0 },
    padding: null,
    added_tokens: SPECIAL_TOKENS.map((content) => ({
      id: idOf(content),
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('[CLS]', 0), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]', 0)],
      pair: [special('[CLS]', 0), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]', 0), { Sequence: { id: 'B', type_id: 1 } }, special('[SEP]', 1)],
      special_tokens: Object.fromEntries(['[CLS]', '[SEP]'].map((token) => [token, { id: token, ids: [idOf(token)], tokens: [token] }])),
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocabulary.map((token, id) => [token, id])),
    },
  };
}

export function tokenizerConfigJson(maxLength: number): unknown {
  return {
    tokenizer_class: 'BertTokenizer',
    do_lower_case: true,
    tokenize_chinese_chars: true,
    strip_accents: null,
    model_max_length: maxLength,
    cls_token: '[CLS]',
    sep_token: '[SEP]',
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    mask_token: '[MASK]',
    clean_up_tokenization_spaces: true,
  };
}
