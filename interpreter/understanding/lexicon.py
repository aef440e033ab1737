"""What words mean to the rules NLU (`understanding.rules`): the dialogue-act lexicon, question and
negation markers, and the readers of word forms (Hangul syllables and how a stem conjugates,
Korean and English numerals, the frame around a short free-text answer, the regexes built from
the tables). Nothing here knows about programs, slots or intents.

In: words of an utterance already normalised by `understanding.text.normalise` (lowercase, no
punctuation, apostrophes dropped: `don't` -> `dont`). Out: table lookups, `numbers(words)`,
`free_text(raw)`, `is_noise`, question-ending and syllable tests, regex sources for phrases
and synonyms. All tables are module constants; every regex here is compiled at import.

How the act tables are matched (entries are written with their spaces removed, so `잘 있어요`
and `잘있어요` are one entry):
  EXACT_ACTS        the whole utterance is the entry -> that act, confidence 1.0
  LEAD_*            the first one or two words (joined) are the entry
  *_WORDS           one to three consecutive words (joined) are the entry
  *_PHRASES         the entry occurs anywhere in the utterance; only stems too distinctive to
                    appear inside an unrelated word go here
"""

from __future__ import annotations

import re

# --- dialogue acts -------------------------------------------------------------------------

_AFFIRM = (
    "응", "응응", "웅", "엉", "어어", "네", "네네", "넵", "넹", "녜", "예", "예예", "yes",
    "그래", "그래요", "그래그래", "그러자", "그러죠", "그럽시다", "그럼", "그럼요", "그렇죠", "그렇지",
    "그렇구나", "그렇군요", "그렇네요", "그렇습니다", "맞아", "맞아요", "맞습니다", "맞지", "맞죠",
    "좋아", "좋아요", "좋지", "좋죠", "좋습니다", "좋네요", "알겠어", "알겠어요", "알겠습니다",
    "알았어", "알았어요", "알았습니다", "오케이", "오키", "콜", "당연하지", "당연하죠", "물론",
    "물론이죠", "물론이지", "괜찮아", "괜찮아요", "괜찮습니다", "ㅇㅇ", "ㅇㅇㅇ", "ㅇㅋ", "ㅇㅋㅇㅋ",
    "yeah", "yep", "yup", "ok", "okay", "sure", "right", "alright", "fine", "ofcourse",
    "soundsgood", "thatsright", "iagree", "correct", "absolutely", "definitely", "yesplease",
)
_DENY = (
    "아니", "아니요", "아뇨", "아니오", "아니야", "아니에요", "아닙니다", "아니거든", "아니아니",
    "노", "놉", "싫어", "싫어요", "싫습니다", "됐어", "됐어요", "됐습니다", "안돼", "안돼요",
    "안됩니다", "별로", "별로요", "아직", "아직요", "아직이요", "안할래", "안할래요", "안할게요",
    "필요없어", "필요없어요", "ㄴㄴ", "ㄴㄴㄴ", "no", "nope", "nah", "notyet", "nothanks",
    "nothankyou", "notreally", "idontthinkso", "never", "noway",
)
# A bare "안녕" opens and closes a conversation alike. Read as goodbye: a wrong goodbye at an
# ordinary node changes nothing (only the end intent leaves it), a wrong greet at the closing
# node would resume a conversation the user is leaving.
_GOODBYE = (
    "안녕", "안뇽", "잘가", "잘가요", "잘가세요", "잘자", "잘자요", "잘자라", "들어가세요",
    "bye", "byebye", "바이", "바이바이", "빠이", "빠이빠이", "ㅂㅂ", "ㅂㅇ", "ㅂㅂㅂ",
    "seeyou", "seeya", "goodnight", "cya", "later", "seeyoulater", "takecare", "goodbye",
    "안녕히계세요", "안녕히가세요", "안녕히주무세요", "다음에봐요", "또봐요", "또봐", "잘있어",
    "잘있어요", "이만", "그럼이만", "오늘은이만",
)
_THANK = (
    "감사", "감사요", "감사합니다", "감사해요", "감사드립니다", "고마워", "고마워요", "고맙습니다",
    "고마웠어요", "ㄱㅅ", "ㄳ", "ㄱㅅㄱㅅ", "thanks", "thankyou", "thx", "ty", "thanksalot",
    "thankyousomuch", "땡큐", "땡스",
)
_GREET = (
    "안녕하세요", "안녕하십니까", "안녕하셨어요", "반가워", "반가워요", "반갑습니다", "좋은아침",
    "좋은아침이에요", "굿모닝", "hello", "hi", "hey", "hiya", "goodmorning", "goodafternoon",
    "goodevening", "여보세요",
)
# Sounds that hold the floor without saying anything: alone they are `null` (the user spoke,
# so never `silence`); in front of content they are skipped.
FILLER_WORDS = frozenset((
    "음", "음음", "음음음", "으음", "어", "아", "에", "흠", "흐음", "글쎄", "글쎄요", "저기", "저기요",
    "그게", "그러니까", "뭐랄까", "아이고", "아이구", "어휴", "에휴", "휴", "헐", "엥", "오", "와",
    "잠깐", "잠깐만", "잠깐만요", "잠시만", "잠시만요", "hmm", "hm", "um", "umm", "uh", "uhh", "er",
    "well", "ah", "oh", "wait", "waitaminute", "holdon",
))

EXACT_ACTS: dict[str, str] = {
    **{w: "affirm" for w in _AFFIRM}, **{w: "deny" for w in _DENY},
    **{w: "goodbye" for w in _GOODBYE}, **{w: "thank" for w in _THANK},
    **{w: "greet" for w in _GREET},
    "어": "affirm",  # spoken "yeah" when alone; in front of content it is a filler
}
# Act words that agree or are polite; content words are everything else ("좋아요" in
# "네 좋아요 얘기해요" is no health report). Deny words stay: they may negate ("no good").
POLITE_ACT_WORDS = frozenset(w for w, act in EXACT_ACTS.items() if act != "deny")

# "그럼 이만" and "괜찮아요 근데" open with words that are no answer in front of content.
LEAD_AFFIRM = frozenset(_AFFIRM) - {"괜찮아", "괜찮아요", "괜찮습니다", "right", "fine",
                                    "correct", "그럼"}
LEAD_DENY = frozenset(_DENY) - {"never", "아직", "별로"}  # "아직 안 먹었어" is a statement
# After a lead marker these start a new clause that decides the act ("아니 근데 너 누구야?").
CONNECTIVES = frozenset(("근데", "그런데", "근데요", "그나저나", "하지만", "그래도", "but", "btw",
                         "anyway"))

GOODBYE_WORDS = frozenset(_GOODBYE) - {"later", "이만"}  # "이만" only alone ("이만 원")
THANK_WORDS = frozenset(_THANK)
GREET_WORDS = frozenset(_GREET)

GOODBYE_PHRASES = (
    "안녕히", "잘있어", "잘있으세요", "잘계세요", "다음에봐", "다음에또", "다음에뵐", "다음에뵈",
    "다음에얘기", "다음에이야기", "나중에봐", "나중에얘기", "나중에이야기", "또봐요", "또봬", "또뵐",
    "또뵈", "또만나", "또만납", "수고하세요", "수고하셨", "이만끊", "끊을게", "끊겠습", "goodbye",
    "seeyou", "haveaniceday", "haveagoodday", "좋은하루", "좋은밤",
)
THANK_PHRASES = ("고마워", "고마와", "고맙", "감사합", "감사해", "감사드", "감사했", "thank", "땡큐")
GREET_PHRASES = ("안녕하세요", "안녕하십", "반갑", "반가워")

# Keyboard mashing: runs of neighbouring keys that no English word contains.
KEYBOARD_RUNS = ("qwe", "asd", "sdf", "dfg", "fgh", "ghj", "hjk", "jkl", "zxc", "xcv", "cvb",
                 "vbn", "bnm", "uio", "iop", "tyu", "yui")


def is_noise(word: str) -> bool:
    """A word that carries no meaning: a filler, a jamo run, keyboard mashing."""
    if word in FILLER_WORDS or not any(ch.isalnum() for ch in word):
        return True  # a filler, or emoji and symbols only
    if all("\u3131" <= ch <= "\u318e" for ch in word):
        return word not in EXACT_ACTS  # "ㅁㄴㅇㄹ" is noise, "ㅇㅋ" is a word
    if word.isascii() and word.isalpha() and len(word) >= 3:
        if not any(v in word for v in "aeiouy") or len(set(word)) == 1:
            return True
        return any(run in word for run in KEYBOARD_RUNS)
    return False


# --- questions -----------------------------------------------------------------------------

# Question words: a word starting with one of these asks something, unless it starts with an
# exclusion (언제나 "always", 왜냐하면 "because", 뭐든 "anything").
WH_PREFIXES = ("뭐", "뭘", "뭔", "무엇", "무슨", "무어", "누구", "누가", "어디", "언제", "왜",
               "어떻게", "어때", "어떠", "어떤가", "어느", "얼마")
WH_EXCLUDED = ("언제나", "언제든", "어디든", "누구나", "누구든", "뭐든", "무엇이든", "무엇보다",
               "왜냐", "어떻게든", "얼마전", "얼마동안", "뭔가", "무언가")
# "뭐 그냥 그래" uses 뭐 as a filler, not as "what".
WH_FILLER_NEXT = frozenset(("그냥", "그럭저럭", "별로", "대충", "다", "괜찮아", "괜찮아요"))
# Korean question words are also indefinites: "어디 아픈 데는 없어" is "nowhere hurts".
NEGATIVE_ENDINGS = ("없", "않", "안", "못")
EN_WH = frozenset(("who", "what", "where", "when", "why", "how", "which", "whose", "whom"))
EN_AUX = frozenset(("do", "does", "did", "are", "is", "am", "can", "could", "would", "will",
                    "should", "shall", "may", "have", "has", "was", "were"))
EN_SUBJECTS = frozenset(("you", "i", "we", "it", "he", "she", "they", "there", "this", "that",
                         "my", "your", "the"))
# A question with one of these is about the bot ("너는 밥 먹었어?"), not about the user.
SECOND_PERSON = frozenset(("너", "너는", "넌", "너도", "너의", "니가", "너한테", "당신", "you",
                           "your", "yours"))

# --- intent examples ---------------------------------------------------------------------------

# Endings stripped from an example word to find its stem (그만할래요 -> 그만할), longest first.
INTENT_ENDINGS = ("습니다", "게요", "래요", "세요", "어요", "아요", "해요", "에요", "예요", "자",
                  "요", "게", "래", "어", "아", "다", "죠")
# Example words that need not appear in the utterance ("이제 끝낼게요" matches "끝낼래요").
INTENT_STOPWORDS = frozenset(("이제", "그럼", "그냥", "좀", "저", "나", "제가", "오늘은", "i",
                              "want", "to", "the", "a", "an", "please", "just", "now", "this",
                              "id", "like", "lets"))

# --- intent similarity (`understanding.similarity`) ------------------------------------------

# Words that say nothing about which intent an utterance has: adverbs, pronouns and time
# words around a request ("이제 그만할게요", "그냥 취소할래요", "I just want to stop").
SIMILARITY_STOPWORDS = INTENT_STOPWORDS | frozenset((
    "오늘", "오늘은", "지금", "지금은", "다시", "일단", "이번엔", "이번에는", "정말", "진짜", "너무",
    "저는", "전", "나는", "난", "내가", "우리", "그러면", "이거", "그거", "저거", "이것", "그것",
    "잘", "더", "또", "다", "꼭", "많이", "조금", "아주", "막", "me", "we", "you", "can", "could",
    "would", "do", "it", "is", "for", "today",
))
# Auxiliary verbs after a verb's -아/-어 or -고 form: "취소해 주세요", "바꾸고 싶어요".
AUXILIARY_WORDS = frozenset((
    "주세요", "주실래요", "주시겠어요", "주십시오", "줄래요", "줄래", "줘", "줘요", "주라", "싶어요",
    "싶어", "싶습니다", "싶은데요", "싶은데", "싶네요", "싶다", "싶어서",
))
# The same glued to the verb ("취소해주세요", "바꾸고싶어요").
GLUED_AUXILIARIES = frozenset((
    "주세요", "주실래요", "주시겠어요", "주십시오", "줄래요", "줄래", "줘요", "줘", "고싶어요",
    "고싶어", "고싶습니다", "고싶네요", "고싶은데요", "고싶은데", "고싶다",
))
# Verb and adjective endings; the longest one a word ends with is stripped to find its stem
# (모르겠어요 -> 모르, 끝낼게요 -> 끝낼, 바꾸고 -> 바꾸).
STEM_ENDINGS = frozenset((
    "겠습니다", "겠는데요", "겠어요", "겠네요", "겠는데", "겠어", "겠다", "습니다", "니다", "는데요",
    "은데요", "거든요", "거든", "더라고요", "네요", "군요", "구나", "게요", "께요", "래요", "세요",
    "셔요", "시죠", "어요", "아요", "여요", "에요", "예요", "이요", "지요", "까요", "려고요", "려고",
    "어야", "아야", "야",
    "는데", "은데", "죠", "자", "요", "게", "께", "래", "어", "아", "여", "다", "지", "고", "니",
    "냐", "까",
))
# Endings of a clause that gives a reason or a condition ("도와주셔서 감사합니다", "이만하면
# 괜찮아요", "그만하고 싶지만"): a word ending so asks for nothing; it keeps its ending in the
# similarity key, and an example's stem does not count in it.
SUBORDINATE_ENDINGS = ("서", "니까", "면", "지만")
# Endings that follow the ㄹ or ㄴ of a future or adnominal form, which goes with them
# (할래요 -> 하, 끝낼게요 -> 끝내, 할지 -> 하): a stem's own ㄹ stays before other endings
# (알아요 -> 알).
AFTER_FINAL_ENDINGS = frozenset(("래요", "래", "게요", "게", "께요", "께", "까요", "까", "지",
                                 "다", "는데요", "는데"))
# Noun particles, stripped when two syllables or more remain (날짜를 -> 날짜, 이름이 -> 이름);
# the long ones first, before any verb ending (여기까지, 병원에서).
PARTICLES = frozenset(("은", "는", "이", "가", "을", "를", "도", "에", "로", "의", "랑", "만"))
LONG_PARTICLES = frozenset(("으로", "에서", "에게", "한테", "이랑", "부터", "까지", "까지는",
                            "에서는", "으로는"))
MAX_SUFFIX = max(map(len, (*GLUED_AUXILIARIES, *STEM_ENDINGS, *LONG_PARTICLES)))
# Stems that mean the same for what a user asks of a conversation, read as one unit (their
# class): stopping (quitting too), later, talk (light: every topic is talk), changing, not
# knowing, help. Only requests: a past form keeps its own stem ("끝냈", a report).
_CLASSES = {
    "=stop": ("그만", "이만", "여기까지", "끝내", "끝", "종료", "마무리", "그만두", "관두"),
    "=later": ("다음", "나중"),
    "=talk": ("얘기", "이야기", "대화", "말", "통화"),
    "=change": ("바꾸", "고치", "수정", "변경"),
    "=unknown": ("모르", "헷갈리"),
    "=help": ("도오", "돕", "도움"),  # 도와 opens to 도오
}
STEM_CLASSES = {stem: name for name, stems in _CLASSES.items() for stem in stems}
# Stems of light words: talk, things, being and doing ("얘기", "거", "있", "하"), which every
# topic uses; an n-gram made of them only weighs `similarity.LIGHT_WEIGHT`.
LIGHT_STEMS = frozenset((
    "=talk", "거", "것", "게", "수", "때", "있", "없", "되", "보", "주", "하", "가", "오", "talk",
    "thing", "do", "be", "have", "get", "go",
))
# Act words say how, not what: "네", "그래요", "고마워요" are left out of the similarity key
# (goodbye words stay: "이만" and "안녕히 계세요" are how an end is said).
SIMILARITY_ACT_WORDS = frozenset(w for w, act in EXACT_ACTS.items() if act != "goodbye") \
    | FILLER_WORDS


# --- negation --------------------------------------------------------------------------------

# A word right before a match that negates it ("안 먹었어", "not good").
NEGATION_BEFORE = frozenset((
    "안", "못", "not", "no", "never", "dont", "didnt", "doesnt", "cant", "cannot", "couldnt",
    "wont", "wouldnt", "havent", "hasnt", "hadnt", "isnt", "arent", "wasnt", "werent",
    "without", "nt",
))
# Syllables glued in front of a Korean stem that negate it ("안먹었어", "못챙겨 먹었어").
NEGATION_PREFIX = ("안", "못")
# Negation after a match: "-지 않/못/말", "-ㄴ 데 없", "X 안/못 (verb)", "X 말고".
NEGATION_AFTER = re.compile(
    r"\S*지(?:도|는|를|가)?\s?(?:않|못|말|마)"
    r"|(?:한|함|은|는|운|픈|할)?\s?(?:데|곳|거|건|게|적|데는|곳은|적은)?\s?없"
    r"|(?:은|는|을|를|도)?\s(?:(?:안|못)\s|말고)"
)
# Words that start with a negation ("않아요", "못해", "말고", "마세요").
NEGATED_VERB_PREFIXES = ("않", "못", "말고", "말아", "마세요", "마라")
# A verb after a glued 안/못 ("안돼", "안할래요", "못가요"); "안녕", "안경" are no negation.
_NEGATED_VERB_HEADS = frozenset("하해할했돼되될됐갈가와올먹")
# Auxiliaries in their -지 form, which a negation follows ("그만하고 싶지 않아요").
NEGATABLE_AUXILIARIES = ("싶지", "싶진")


def is_negation_word(word: str) -> bool:
    """A word that negates ("안", "못", "않아요", "하지마", "없어요", "안돼", "don't")."""
    if word in NEGATION_BEFORE or word == "마" or word.startswith(NEGATED_VERB_PREFIXES):
        return True
    if "지않" in word or "지못" in word or "지마" in word or word.startswith("없"):
        return True
    return len(word) >= 2 and word[0] in NEGATION_PREFIX and word[1] in _NEGATED_VERB_HEADS


# --- Hangul syllables ----------------------------------------------------------------------------

HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3
FINAL_N, FINAL_L, FINAL_B, FINAL_SS = 4, 8, 17, 20  # final consonant indices of ㄴ, ㄹ, ㅂ, ㅆ
INITIAL_H, VOWEL_A, VOWEL_AE = 18, 0, 1
# An open stem syllable changes its vowel when an ending is added (아프 -> 아파, 쑤시 -> 쑤셔,
# 보 -> 봐, 주 -> 줘, 되 -> 돼); each family is the vowels one syllable may show.
_VOWEL_FAMILIES = ((18, 4, 0), (20, 6), (8, 9), (13, 14), (11, 10))
VOWEL_FAMILY = {v: family for family in _VOWEL_FAMILIES for v in family}


def syllable(ch: str) -> tuple[int, int, int] | None:
    """(initial, vowel, final) indices of a Hangul syllable, or None."""
    code = ord(ch) - HANGUL_FIRST
    if not 0 <= code <= HANGUL_LAST - HANGUL_FIRST:
        return None
    return code // 588, (code // 28) % 21, code % 28


def final_is(ch: str, final: int) -> bool:
    parts = syllable(ch)
    return parts is not None and parts[2] == final


def vowel_family(initial: int, vowel: int) -> tuple[int, ...]:
    """The vowels a stem syllable may take under an ending (하 -> 해 as well)."""
    if initial == INITIAL_H and vowel in (VOWEL_A, VOWEL_AE):
        return (VOWEL_A, VOWEL_AE)
    return VOWEL_FAMILY.get(vowel, (vowel,))


def syllable_class(initial: int, vowels: tuple[int, ...]) -> str:
    """A regex class of every syllable with this initial, one of these vowels, any final."""
    ranges = []
    for vowel in vowels:
        start = HANGUL_FIRST + (initial * 21 + vowel) * 28
        ranges.append(f"{chr(start)}-{chr(start + 27)}")
    return "[" + "".join(ranges) + "]"


# Vowels of a contracted open syllable and the stem vowel they contract (바꿔 -> 바꾸,
# 도와 -> 도오, 돼 -> 되, 고쳐 -> 고치); 해 -> 하 is handled with the initial ㅎ. 과 and 화 stay
# (치과, 대화: nouns; no verb contracts to them).
_OPENED_VOWELS = {14: 13, 9: 8, 10: 11, 6: 20}


def open_syllable(ch: str, drop_final: bool = False) -> str:
    """A stem's last syllable without contraction (꿔 -> 꾸, 해 -> 하) and, with `drop_final`,
    without the ㄹ/ㄴ of a future or adnominal form (할 -> 하, 낼 -> 내)."""
    parts = syllable(ch)
    if parts is None:
        return ch
    initial, vowel, final = parts
    if drop_final and final in (FINAL_N, FINAL_L):
        final = 0
    if final == 0:
        if initial == INITIAL_H and vowel == VOWEL_AE:
            vowel = VOWEL_A
        elif not (vowel == 9 and initial in (0, INITIAL_H)):  # 과, 화
            vowel = _OPENED_VOWELS.get(vowel, vowel)
    return chr(HANGUL_FIRST + (initial * 21 + vowel) * 28 + final)


_OUTER_START = re.compile(r"\A(\(\?[aiLmsux]+\))?(?:\^|\\A)")
_OUTER_END = re.compile(r"(?<!\\)(?:\\\\)*(\$|\\Z)\Z")


def unanchored(pattern: str) -> str:
    """An author's regex without its outer anchors (a leading `^` or `\\A` after any global
    flags, a trailing unescaped `$` or `\\Z`): the pattern of a value, to search a sentence."""
    body = _OUTER_START.sub(r"\1", pattern, count=1)
    end = _OUTER_END.search(body)
    return body[:end.start(1)] if end else body


def cuts_a_token(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]` begins or ends inside a run of ASCII letters and digits."""
    return (start > 0 and _ascii_alnum(text[start - 1]) and _ascii_alnum(text[start])) or (
        end < len(text) and _ascii_alnum(text[end - 1]) and _ascii_alnum(text[end]))


def _ascii_alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def compact_regex(phrase: str) -> str:
    """A regex for `phrase` in normalised text: Korean ignores spacing, English keeps words."""
    if phrase.isascii():
        return r"\b" + r"\s+".join(re.escape(w) for w in phrase.split()) + r"\b"
    return r"\s*".join(re.escape(ch) for ch in phrase.replace(" ", ""))


def synonym_regex(spaced: str) -> str:
    """A synonym's regex: spacing-insensitive; an open last syllable may take an ending."""
    compact = spaced.replace(" ", "")
    last = syllable(compact[-1]) if compact else None
    if spaced.isascii() or len(compact) < 2 or last is None or last[2] != 0:
        return compact_regex(spaced)
    vowels = vowel_family(last[0], last[1])  # 아프 -> 아파, 아픈; 쑤시 -> 쑤셔
    return compact_regex(compact[:-1]) + r"\s*" + syllable_class(last[0], vowels)


def negatable_stem(spaced: str) -> str | None:
    """The verb stem a synonym is conjugated from (먹었 -> 먹, 좋아 -> 좋), for "먹지 않았어"."""
    compact = spaced.replace(" ", "")
    if spaced.isascii() or len(compact) < 2:
        return None
    last, stem = compact[-1], compact[:-1]
    if last in "었았였아어":
        return stem
    return stem + "시" if last == "셨" else stem + "하" if last in "했해" else None


def guarded(alternatives: list[str], first_chars: set[str]) -> str:
    """`(?=[firsts])(?:a|b|...)`: the class lets a scan skip every position no branch can open
    (about five times faster than trying each branch at each position)."""
    chars = re.escape("".join(sorted(first_chars)))
    return f"(?=[{chars}])(?:{'|'.join(alternatives)})"


def _spaced_chars(entry: str) -> str:
    return r"\s?".join(map(re.escape, entry))


def _act_regex(words: frozenset[str], phrases: tuple[str, ...]) -> re.Pattern:
    """Whole words of `words` (entries may span words: "잘 가요") or `phrases` anywhere."""
    bounded = "|".join(_spaced_chars(w) for w in sorted(words, key=len, reverse=True))
    free = [_spaced_chars(p) for p in sorted(phrases, key=len, reverse=True)]
    # The word boundaries stand outside the branches so that each branch opens with a literal.
    alternatives = [r"(?<!\S)(?:" + bounded + r")(?!\S)", *free]
    return re.compile(guarded(alternatives, {e[0] for e in (*words, *phrases)}))


GOODBYE_RE = _act_regex(GOODBYE_WORDS, GOODBYE_PHRASES)
THANK_RE = _act_regex(THANK_WORDS, THANK_PHRASES)
GREET_RE = _act_regex(GREET_WORDS, GREET_PHRASES)
WH_WORD_RE = re.compile(r"(?<!\S)(?:" + "|".join(map(re.escape, WH_PREFIXES)) + ")")


def has_question_ending(last: str) -> bool:
    """Whether the last word ends like a question although no "?" was typed."""
    if last.endswith("니까"):  # 합니까 asks, 아프니까 ("because") does not
        return len(last) >= 3 and final_is(last[-3], FINAL_B)
    if last.endswith("가요"):  # 괜찮은가요 asks, 병원에 가요 does not
        return len(last) >= 3 and final_is(last[-3], FINAL_N)
    if last.endswith("니"):  # 먹었니 asks, 어머니 and 언니 are people
        return len(last) >= 2 and not last.endswith(("머니", "언니", "이니", "거니"))
    if last.endswith("까"):
        return not last.endswith("아까")  # "earlier"
    # These endings need a stem in front: "안 나요" is the verb 나다, "아프나요" asks.
    return (len(last) >= 3 and last.endswith(("나요", "까요", "냐고"))) or (
        len(last) >= 2 and last.endswith("냐"))


def is_indirect_question(word: str) -> bool:
    """An embedded-question ending -ㄴ지/-ㄹ지 (먹었는지, 좋은지, 할지), not 먹었지."""
    return len(word) >= 2 and word.endswith("지") and (
        final_is(word[-2], FINAL_N) or final_is(word[-2], FINAL_L))


# --- free text ---------------------------------------------------------------------------------

# Frames around a short answer ("제 이름은 김철수입니다" -> "김철수"). A name frame is always
# stripped, another frame only together with a copula, a copula alone only from one word; the
# answer keeps its wording when what is left is longer than a few words.
NAME_FRAMES = ("제 이름은", "내 이름은", "저의 이름은", "이름은", "my name is", "my name's")
ANSWER_FRAMES = ("저는", "전", "나는", "난", "i'm", "i am", "it's", "it is", "this is")
ANSWER_COPULAS = ("이라고 합니다", "라고 합니다", "이라고 해요", "라고 해요", "입니다", "이에요",
                  "이예요", "예요", "에요", "이요", "이야")
MAX_ANSWER_WORDS = 3
# Syllables a verb or adjective ending puts before a final 요 (했어요, 좋아요, 그래요, 가요).
VERBAL_BEFORE_YO = frozenset("어아여해워와네게래지죠나까군걸데세봐줘써가야예에고서며면요")


def _strip_prefix(text: str, prefixes: tuple[str, ...]) -> str | None:
    lowered = text.lower()
    for prefix in prefixes:
        if lowered.startswith(prefix + " "):
            return text[len(prefix) + 1:].strip()
    return None


def _strip_copula(text: str) -> str | None:
    for copula in ANSWER_COPULAS:
        if text.endswith(copula) and len(text) > len(copula):
            return text[: -len(copula)].strip()
    if " " not in text and len(text) > 2 and text[-1] == "요" and text[-2] not in VERBAL_BEFORE_YO:
        return text[:-1]  # "김철수요": a polite 요 after a noun, not after an ending (산책했어요)
    return None


def free_text(raw: str) -> str:
    """The answer of a free-text reply: trimmed; a short one loses its name or copula frame."""
    text = raw.strip().rstrip(".!~。！ ").strip()
    echoed = max(text.rfind("?"), text.rfind("？"))
    if 0 <= echoed < len(text) - 1:
        text = text[echoed + 1:].strip()  # "성함이요? 김순자": the answer follows the echo
    named = _strip_prefix(text, NAME_FRAMES)
    framed = _strip_prefix(text, ANSWER_FRAMES)
    core = named if named is not None else framed if framed is not None else text
    unwrapped = _strip_copula(core)
    if unwrapped is not None and (core is not text or " " not in unwrapped):
        core = unwrapped
    elif named is None:
        core = text
    return core if core and len(core.split()) <= MAX_ANSWER_WORDS else text


# --- numbers -----------------------------------------------------------------------------------

SINO_DIGITS = {"공": 0, "영": 0, "일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "륙": 6,
               "칠": 7, "팔": 8, "구": 9}
SINO_UNITS = {"십": 10, "백": 100, "천": 1000}
NATIVE_UNITS = {"하나": 1, "둘": 2, "셋": 3, "넷": 4, "다섯": 5, "여섯": 6, "일곱": 7, "여덟": 8,
                "아홉": 9}
NATIVE_TENS = {"열": 10, "스물": 20, "서른": 30, "마흔": 40, "쉰": 50, "예순": 60, "일흔": 70,
               "여든": 80, "아흔": 90}
# Forms used in front of a counter ("한 번", "세 살", "스무 살").
NATIVE_COUNTER_FORMS = {"한": 1, "두": 2, "세": 3, "네": 4}
NATIVE_TENS_COUNTER_FORMS = {"스무": 20}
EN_NUMBERS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}

# Counters and endings that may follow a numeral in the same word. Bare particles (이, 가, 도)
# are left out on purpose: "열이 나요" is a fever and "하나도" means "not at all".
NUMBER_SUFFIXES = frozenset((
    "", "살", "세", "번", "번째", "개", "명", "시", "시간", "분", "끼", "그릇", "잔", "알", "달",
    "층", "권", "장", "마리", "병", "점", "점이요", "점요", "점이에요", "점입니다", "점정도", "정도",
    "쯤", "요", "이요", "이에요", "예요", "입니다", "년", "년생", "년도", "년생이에요", "년생이요",
    "년생입니다", "월", "일", "밖에", "번이요", "살이에요", "살이요", "살입니다", "개요", "회", "단계",
))
# Words that must follow a counter-form numeral (한/두/세/네/스무) for it to be a number, so
# "네" (yes) and "한" (about) stay words.
COUNTER_WORDS = frozenset((
    "살", "번", "개", "명", "시", "시간", "분", "끼", "그릇", "잔", "알", "달", "층", "권", "장",
    "마리", "병", "회", "번째", "살이에요", "살이요", "번이요", "끼니", "끼도", "번도", "개요",
))
# A bare one-syllable Sino numeral (일, 이, 사, 오, 칠...) is also a word; it counts only when it
# is all that was said or a point or amount marker follows.
SINO_CONTEXT_SUFFIXES = frozenset(("점", "점이요", "점요", "점이에요", "점입니다", "점정도",
                                   "정도", "쯤", "이요", "요", "입니다", "이에요", "예요",
                                   "년", "년생", "단계", "번", "층"))
SINO_CONTEXT_WORDS = frozenset(("점", "정도", "쯤", "정도요", "정도예요", "점이요", "단계"))
# A number that names the scale rather than answers ("10점 만점에 7", "0에서 10 중에").
SCALE_SUFFIXES = frozenset(("에서", "중에", "중", "중에서", "만점에", "점만점에", "부터", "까지"))
SCALE_NEXT_WORDS = frozenset(("만점에", "만점", "중에", "중", "중에서", "까지", "점만점에"))


def _native_numerals() -> dict[str, tuple[int, str]]:
    """Native Korean numerals 1..99 -> (value, kind); kind 'counter' for forms that need one."""
    table: dict[str, tuple[int, str]] = {}
    for tens_word, tens in (("", 0), *NATIVE_TENS.items()):
        if tens_word:
            table[tens_word] = (tens, "native")
        for word, unit in NATIVE_UNITS.items():
            table[tens_word + word] = (tens + unit, "native")
        for word, unit in NATIVE_COUNTER_FORMS.items():
            table[tens_word + word] = (tens + unit, "counter")
    for word, tens in NATIVE_TENS_COUNTER_FORMS.items():
        table[word] = (tens, "counter")
    return table


_NATIVE = _native_numerals()
_NUMERAL_PREFIX = re.compile(
    "[" + "".join(sorted(set("".join(_NATIVE)) | set(SINO_DIGITS) | set(SINO_UNITS))) + "]+")
_DIGITS = re.compile(r"\d+(?:\.\d+)?")


def sino_numeral(word: str) -> int | None:
    """A Sino-Korean numeral (칠, 십오, 이십삼, 천구백오십) up to 9999, or None."""
    total, digit, last_unit = 0, None, 10_000
    for ch in word:
        if ch in SINO_DIGITS:
            if digit is not None:
                return None  # two digits in a row is a word (오이, 사이), not a number
            digit = SINO_DIGITS[ch]
            continue
        unit = SINO_UNITS.get(ch)
        if unit is None or unit >= last_unit:
            return None
        total += (1 if digit is None else digit) * unit
        digit, last_unit = None, unit
    return total + (digit or 0)


def _korean_numeral(word: str) -> tuple[int, str] | None:
    if word in _NATIVE:
        return _NATIVE[word]
    value = sino_numeral(word)
    return None if value is None else (value, "sino1" if len(word) == 1 else "sino")


def word_number(word: str) -> tuple[int | float, str, str] | None:
    """(value, suffix, kind) of a word that is a number, with what follows it in the word."""
    match = _DIGITS.match(word)
    if match:
        text = match.group(0)
        return (float(text) if "." in text else int(text)), word[match.end():], "digits"
    if word in EN_NUMBERS:
        return EN_NUMBERS[word], "", "english"
    match = _NUMERAL_PREFIX.match(word)
    for cut in range(match.end() if match else 0, 0, -1):
        if word[cut:] in NUMBER_SUFFIXES:
            parsed = _korean_numeral(word[:cut])
            if parsed:
                return parsed[0], word[cut:], parsed[1]
    return None


def _in_context(kind: str, suffix: str, after: str, word_count: int) -> bool:
    """Whether an ambiguous numeral word is used as a number here (네 = yes, 이 = this)."""
    if kind == "counter":
        return suffix in COUNTER_WORDS or (not suffix and after in COUNTER_WORDS)
    if kind == "sino1":
        return (word_count == 1 or suffix in SINO_CONTEXT_SUFFIXES
                or (not suffix and after in SINO_CONTEXT_WORDS))
    return True


def numbers(words: list[str]) -> list[tuple[int | float, str, int]]:
    """(value, suffix, word index) of every number given as an answer; scale bounds left out."""
    found = []
    for i, word in enumerate(words):
        reading = word_number(word)
        if reading is None:
            continue
        value, suffix, kind = reading
        after = words[i + 1] if i + 1 < len(words) else ""
        if kind == "english" and value >= 20 and EN_NUMBERS.get(after, 10) < 10:
            value += EN_NUMBERS[after]  # "twenty five"
        # "스물한" alone is 21 (SPEC 14.1); a bare "한" or "세" stays a word
        alone = kind == "counter" and value >= 20 and not suffix and len(words) == 1
        if not alone and not _in_context(kind, suffix, after, len(words)):
            continue
        if (suffix in SCALE_SUFFIXES or after in SCALE_NEXT_WORDS
                or words[max(0, i - 2):i] == ["out", "of"]):
            continue
        found.append((value, suffix, i))
    return found
