"""Safety on lemmas (SPEC 13.4): crisis rules read from the analyser's lemmas, beside the lexicon.

In: a language ("ko" or "en") and, per user turn, the raw text. Out: `findings(language,
text)`, the (category, rule name, matched lemmas) of every rule that counted, in `RULES` order.
After: the same text always gives the same answer (the analyser is deterministic and every
analysis waits for it to load, `morph.analyser`); nothing raises on any text.

Why a second tier: the lexicon (`safety_lexicon`) spells each crisis as a regex over the text,
so a new ending, a word between, or the words in another order miss it ("계단에서 굴러서 허리를
못 움직이겠어", "가슴을 쥐어짜는 것 같아요"). A rule here names the lemmas a crisis is made of,
each part a set of alternatives, all said within `WINDOW` words in any order: the analyser
reads every inflection of "넘어지다" as `넘어지`, of "fall" as `fall`. A rule only adds: the
detector keeps what the lexicon found.

Negation (SPEC 13.1, the lemma `morph.NEG`, and "없" for Korean): a part written `!` must be
negated (a NEG or "없" right beside it: "못 일어나", "일어날 수가 없어", "대답을 안 해",
"can't move"); otherwise a rule does not count when a negation follows the last lemma it
matched ("때리지 않아요") or, in English, comes among the three lemmas before its first
("I didn't take too many pills"). `unless` lemmas rule a rule out ("장난", "꿈", "영화").
What `morph` drops (particles, endings, "싶다", "다") is not seen here: wishes ("죽고 싶어")
stay in the lexicon.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from .morph import NEG, analyser, primary
from .safety import REMEMBERED_CHARS, REMEMBERED_TEXTS
from .text import normalise

MEDICAL, SELF_HARM, ABUSE = "medical_emergency", "self_harm", "abuse"
WINDOW = 10  # words between the first and the last lemma of a rule, at most
MAX_WORDS = 80  # a turn's first words only: a crisis is said, not buried in an essay
MAX_CHARS = 2000  # of the text (`safety.MAX_DETECT_CHARS`), before it is split in words
MAX_WORD = 40  # characters: a longer "word" is no word the analyser is asked about
# The findings of short texts are kept by the same rule as the detector's answers
# (`safety.REMEMBERED_CHARS`, `REMEMBERED_TEXTS`: at most about a megabyte), for `findings`
# and for every detector of the language.
_KO_NEGATIONS = frozenset((NEG, "없"))


class LemmaRule(NamedTuple):
    name: str
    category: str
    language: str
    parts: tuple[frozenset[str], ...]
    negated: frozenset[int]  # the parts that must be negated
    unless: frozenset[str]


def _rule(name: str, category: str, language: str, *parts: str, unless: str = "") -> LemmaRule:
    """A rule from parts written "a|b|c" ("!a|b": that part must be negated)."""
    return LemmaRule(name, category, language,
                     tuple(frozenset(p.lstrip("!").split("|")) for p in parts),
                     frozenset(i for i, p in enumerate(parts) if p.startswith("!")),
                     frozenset(unless.split("|")) - {""})


_FALL = "넘어지|미끄러지|구르|주저앉|낙상|자빠지|엎어지|떨어지|쓰러지"
_RISE = "!일어나|일어서|움직이|꼼짝|일어날|서"
_PERSON = ("아들|딸|며느리|사위|남편|아내|마누라|영감|할멈|손자|손녀|손주|자식|조카|형|오빠|언니|누나|"
           "동생|간병인|보호사|요양사|도우미|직원|간호사|복지사|놈|녀석|인간|새끼|아들놈|딸년")
_HARM = ("때리|밀치|꼬집|걷어차|조르|윽박지르|협박|위협|괴롭히|학대|가두|쫓아내|굶기|욕하|막말|"
         "폭행|폭언|패|할퀴|발길질|손찌검|쥐어박|짓밟|구타|내쫓")
_MONEY = "돈|연금|통장|카드|도장|인감|땅|집문서|문서|적금|예금|명의|보험금|월급|재산|용돈"
_VALUABLES = _MONEY + "|패물|귀금속|금반지|반지|금목걸이|목걸이|시계|집"
_TAKE = "가져가|빼앗|뺏|훔치|가로채|빼돌리|빼가|갈취|뜯|찾아가|인출"
_PILLS = "수면제|신경안정제|안정제|진통제|혈압약|당뇨약|알약|약|농약|제초제"
_LEISURE = "꿈|영화|드라마|장면|뉴스|게임|놀이|장난|시늉|흉내|연기|소설|책|만화|티비|tv|얘기|이야기"

RULES: tuple[LemmaRule, ...] = (
    # --- medical_emergency ----------------------------------------------------------------
    _rule("fall_stuck", MEDICAL, "ko", _FALL, _RISE, unless="뻔|" + _LEISURE),
    _rule("fall_lying", MEDICAL, "ko", _FALL, "눕|누워", "바닥|땅|아직|계속|혼자|밤새"),
    _rule("fall_broken", MEDICAL, "ko", _FALL, "뼈|다리|팔|손목|허리|골반|고관절|머리",
          "부러지|금가|피|깨지|찢어지|꺾이"),
    _rule("face_droop", MEDICAL, "ko", "얼굴|입|입꼬리|눈꺼풀", "돌아가|처지|비뚤어지|일그러지|마비",
          unless="살|피부|주름|나이|늙|표정|화장"),
    _rule("one_side_weak", MEDICAL, "ko", "한쪽|반쪽|왼쪽|오른쪽|편측",
          "팔|다리|팔다리|몸|얼굴|손|발", "마비|저리|힘|감각|!움직이|들|끌|질질"),
    _rule("sudden_weakness", MEDICAL, "ko", "갑자기", "팔다리|팔|다리|몸|손|온몸|한쪽", "빠지|풀리|마비|저리|끌|질질",
          unless="살|체중|몸무게|털|머리카락|" + _LEISURE),
    _rule("speech_lost", MEDICAL, "ko", "!말|발음", "갑자기|입|얼굴|팔|다리|한쪽|손|혀|마비|어지럽|침"
          "|쓰러지|저리", unless="기|어이|욕|대답|" + _LEISURE),
    _rule("chest_squeeze", MEDICAL, "ko", "가슴|심장|명치", "쥐어짜|짓누르|누르|조이|죄|터지|찢어지",
          unless="소식|듣|얘기|이야기|슬프|이별|알|" + _LEISURE),
    _rule("racing_heart", MEDICAL, "ko", "심장|가슴", "빨리|두근거리|벌렁거리|쿵쾅", "숨|어지럽|쓰러지|아프|답답"
          "|식은땀", unless="설레|운동|계단|놀라|" + _LEISURE),
    _rule("dizzy_stuck", MEDICAL, "ko", "어지럽|현기증|어지러움", "!걷|서|일어나|움직이|일어서"),
    _rule("sudden_dark", MEDICAL, "ko", "눈앞|눈|앞", "캄캄|깜깜|캄캄하|깜깜하", "갑자기"),
    _rule("fall_head", MEDICAL, "ko", _FALL, "머리", "부딪히|박|찧", unless="뻔|" + _LEISURE),
    _rule("cold_sweat", MEDICAL, "ko", "식은땀|땀", "가슴|숨|어지럽|쓰러지|주저앉|토하|팔|답답|심장|떨리|혈당|당뇨"
          "|당뇨약|약|정신|창백", unless="꿈|악몽|운동|덥|더위|사우나|목욕|찜질|" + _LEISURE),
    _rule("high_fever", MEDICAL, "ko", "열|고열", "끓|펄펄|높", "정신|의식|헛소리|경련|몸부림|못알아보"),
    _rule("thunder_headache", MEDICAL, "ko", "머리", "깨지|터지|쪼개지", "토하|구토|갑자기|평생",
          unless="술|숙취|과음|생각|스트레스|공부"),
    _rule("unresponsive", MEDICAL, "ko", "부르|흔들|깨우|불러", "!대답|반응|깨|일어나|눈|뜨"),
    _rule("unconscious", MEDICAL, "ko", "!의식|숨|맥박|호흡|반응", "아버지|어머니|엄마|아빠|남편|아내|영감|"
          "할멈|할머니|할아버지|사람|아이|아들|딸|동생|친구|옆집"),
    _rule("bleeding_on", MEDICAL, "ko", "피|출혈", "계속|!멈추|철철|펑펑|쏟|콸콸|많이|안멈추",
          unless="코피|조금|살짝|멍"),
    _rule("bad_burn", MEDICAL, "ko", "데|화상", "심하|크게|뜨겁|끓|물집|온몸"),
    _rule("sudden_blind", MEDICAL, "ko", "눈|시야|한쪽눈", "!보이", "갑자기", unless=_LEISURE),
    _rule("hit_by_car", MEDICAL, "ko", "차|트럭|오토바이|버스|자동차|택시", "치이",
          unless="뻔|" + _LEISURE),
    _rule("limbs_gave_way", MEDICAL, "ko", "힘", "빠지|풀리", "주저앉|쓰러지", unless="뻔|" + _LEISURE),
    _rule("scald", MEDICAL, "ko", "뜨겁|끓", "쏟|엎|붓|튀", "벗겨지|물집|화상"),
    _rule("chest_and_arm", MEDICAL, "ko", "가슴|심장", "답답|조이|아프|뻐근", "왼팔|팔|어깨|턱",
          "저리|아프|마비", unless="소식|얘기|이야기|슬프|" + _LEISURE),
    _rule("sick_confused", MEDICAL, "ko", "불덩이|고열|토하|구토|설사|쓰러지|경련", "정신", "!차리"),
    _rule("sick_dazed", MEDICAL, "ko", "불덩이|고열|토하|구토|설사", "정신", "없|잃|혼미|오락가락"),
    _rule("low_sugar", MEDICAL, "ko", "혈당|저혈당", "떨어지|낮", "떨리|정신|어지럽|식은땀|쓰러지"),
    _rule("fall_stuck_en", MEDICAL, "en", "fall|slip|trip|collapse|fell",
          "!get|move|stand|reach", unless="asleep|love|behind|apart|for"),
    _rule("floor_stuck_en", MEDICAL, "en", "floor|ground|bathtub|tub", "!get|move|stand"),
    _rule("not_responding_en", MEDICAL, "en", "he|she|husband|wife|mother|father|mum|mom|dad",
          "!answer|respond|breathe|wake|move", "fall|fell|collapse|faint|floor|unconscious"),
    _rule("overdose_en", MEDICAL, "en", "take|took|swallow|swallowed",
          "pill|tablet|dose|medication|medicine|med|insulin|painkiller",
          "too|whole|handful|double|triple|twice|bottle|overdose|extra"),
    # --- self_harm -------------------------------------------------------------------------
    _rule("charcoal", SELF_HARM, "ko", "번개탄", "피우|사|준비|구하|사두|사놓|피워",
          unless=_LEISURE + "|고기|캠핑|구이"),
    _rule("jump_place", SELF_HARM, "ko", "뛰어내리|투신", "옥상|한강|다리|베란다|창문|아파트|높|생각"
          "|밤|오늘|내일|창밖|난간|철로|선로", unless=_LEISURE + "|수영|다이빙|버스|차|계단|낙하산"),
    _rule("way_to_die", SELF_HARM, "ko", "죽|자살", "방법|검색|찾아보|알아보|법",
          unless=NEG + "|살리|" + _LEISURE),
    _rule("pills_to_die", SELF_HARM, "ko", _PILLS, "먹|삼키|털어넣|마시", "죽",
          unless=NEG + "|" + _LEISURE),
    _rule("a_burden", SELF_HARM, "ko", "짐|폐", "없어지|사라지|죽|떠나",
          unless="싸|챙기|옮기|풀|가방|여행|이사|들|무겁|정리|끼치"),
    _rule("bridge_edge", SELF_HARM, "ko", "한강|대교|철로|선로", "다리|대교|난간|위|끝",
          unless="산책|구경|운동|자전거|걷|사진|공사|버스|차|지나가|건너|건느|택시|지하철|" + _LEISURE),
    _rule("charcoal_sleep", SELF_HARM, "ko", "연탄불|연탄|번개탄|숯불|숯", "피우",
          "잠들|죽|영영|영원히|문|닫|테이프", unless="고기|구이|캠핑|난로|보일러|" + _LEISURE),
    _rule("save_pills", SELF_HARM, "ko", "수면제|안정제|신경안정제|진통제", "모으|쌓",
          unless="통|약통|케이스"),
    _rule("sleep_for_ever", SELF_HARM, "ko", "영원히|영영", "잠들|자|감|깨어나|눈",
          unless="도시|사랑|기억|" + _LEISURE),
    _rule("not_to_live", SELF_HARM, "ko", "살|살기", "싫",
          unless="여기|동네|집|시골|도시|아파트|혼자|같이|곳|나라|서울|시끄럽|이사|살찌|빼|빼기|찌|빠지"
                 "|몸무게|다이어트|" + _LEISURE),
    _rule("life_cut", SELF_HARM, "ko", "목숨", "끊|버리|끝내", unless="걸|" + _LEISURE),
    _rule("hanging", SELF_HARM, "ko", "목", "매|매달", "줄|끈|밧줄|생각|준비|사"),
    _rule("save_pills_en", SELF_HARM, "en", "save|saving|hoard|stockpile|collect",
          "pill|tablet|med|medicine|medication|painkiller"),
    # --- abuse -----------------------------------------------------------------------------
    _rule("person_harms", ABUSE, "ko", _PERSON, _HARM,
          unless=_LEISURE + "|멍|모기|파리|공|북|장난감|망치|못|달"),
    _rule("person_pushes", ABUSE, "ko", _PERSON, "밀|밀치", "넘어지|부딪히|다치|멍|벽|바닥|쓰러지",
          unless="휠체어|유모차|수레|카트|" + _LEISURE),
    _rule("person_smashes", ABUSE, "ko", _PERSON, "소리|고함|화|술|욕", "부수|때려부수|깨부수|부서지",
          unless=_LEISURE),
    _rule("person_throws", ABUSE, "ko", _PERSON, "던지", "물건|그릇|접시|컵|리모컨|의자|재떨이|병",
          unless=_LEISURE),
    _rule("tied_down", ABUSE, "ko", _PERSON, "묶|묶어두|묶어놓", "침대|의자|손|발|팔|다리|휠체어|나|저",
          unless="머리|끈|신발|리본|포장|짐"),
    _rule("by_the_hair", ABUSE, "ko", "머리채|멱살|머리끄덩이", "잡|끌|흔들|휘두르"),
    _rule("abandoned", ABUSE, "ko", _PERSON, "버리", "이사|도망|떠나|연락|두", unless="쓰레기|물건|옷|짐|" + _LEISURE),
    _rule("rough_handling", ABUSE, "ko", _PERSON, "거칠|함부로|세게|난폭", "다루|대하|잡|끌"),
    _rule("takes_money", ABUSE, "ko", _PERSON, _MONEY, _TAKE, unless="장|심부름|대신|도와주|사다주|정리|관리"),
    _rule("in_my_name", ABUSE, "ko", "명의", "대출|카드|만들|빌리|팔|보증"),
    _rule("loan_in_my_name", ABUSE, "ko", _PERSON, "이름", "대출|빚|보증"),
    _rule("deed_moved", ABUSE, "ko", _PERSON, "명의|집문서|땅문서|인감", "돌리|넘기|옮기|바꾸"),
    _rule("seal_used", ABUSE, "ko", "도장|인감", "대출|보증|몰래|맘대로|마음대로|허락"),
    _rule("without_leave", ABUSE, "ko", _VALUABLES, "허락|몰래|맘대로|마음대로|함부로",
          "쓰|빼|가져가|팔|찾"),
    _rule("person_harms_en", ABUSE, "en", "son|daughter|husband|wife|caregiver|carer|grandson|"
          "granddaughter|nephew|niece|he|she|they", "hit|slap|kick|punch|pinch|shove|choke|beat",
          "me", unless="ball|joke|play|game"),
    _rule("takes_money_en", ABUSE, "en", "son|daughter|husband|wife|caregiver|carer|grandson|"
          "granddaughter|nephew|niece|he|she|they|someone",
          "take|took|steal|stole|drain|empty|use|spend|withdraw",
          "money|pension|savings|card|account|check|cheque",
          unless="help|manage|for|buy|grocery|groceries|shopping|order"),
)


@functools.cache
def _index(language: str) -> dict[str, tuple[int, ...]]:
    """Lemma -> the rules of `language` (by index in `RULES`) that have it in their first part:
    only those rules are tried on a text."""
    index: dict[str, list[int]] = {}
    for i, rule in enumerate(RULES):
        if rule.language == language:
            for lemma in rule.parts[0]:
                index.setdefault(lemma, []).append(i)
    return {lemma: tuple(ids) for lemma, ids in index.items()}


def lemmas_of(language: str, text: str) -> list[tuple[str, int]]:
    """The (lemma, word position) sequence of `text`'s first `MAX_WORDS` words."""
    read = analyser(language)
    found: list[tuple[str, int]] = []
    for position, word in enumerate(normalise(text[:MAX_CHARS]).split()[:MAX_WORDS]):
        if len(word) <= MAX_WORD:
            found.extend((lemma, position) for lemma in read(word))
    return found


def findings(language: str, text: str) -> list[tuple[str, str, str]]:
    """(category, rule name, the lemmas matched joined by spaces) of every rule that counts.
    A pure function of the text: those of a short text are kept (`_remembered`)."""
    if not isinstance(text, str) or not text.strip():
        return []
    if len(text) <= REMEMBERED_CHARS:
        return list(_remembered(language, text))
    return _findings(primary(language), text)


@functools.lru_cache(maxsize=REMEMBERED_TEXTS)
def _remembered(language: str, text: str) -> tuple[tuple[str, str, str], ...]:
    return tuple(_findings(primary(language), text))


def _findings(language: str, text: str) -> list[tuple[str, str, str]]:
    said = lemmas_of(language, text)
    words = [lemma for lemma, _ in said]
    present = set(words)
    index = _index(language)
    tried = sorted({i for lemma in present for i in index.get(lemma, ())})
    found = []
    for i in tried:
        rule = RULES[i]
        if rule.unless & present or not all(part & present for part in rule.parts):
            continue
        positions = _placed(rule, words, said, language)
        if positions is not None:
            found.append((rule.category, rule.name, " ".join(words[p] for p in positions)))
    return found


def _negated(words: list[str], at: int, language: str) -> bool:
    """Whether the lemma at `at` is negated: NEG just before it, or (Korean) NEG or "없" just after."""
    if at > 0 and words[at - 1] == NEG:
        return True
    after = words[at + 1] if at + 1 < len(words) else ""
    return after == NEG or (language == "ko" and after in _KO_NEGATIONS)


def _negates(following: list[str], language: str) -> bool:
    """Whether the lemmas after a rule's last one negate it: a negation next, or after "적"
    or "거" ("때린 적은 없어요", "때리는 건 아니고": Kiwi keeps those as content)."""
    if following[:1] in (["적"], ["거"], ["것"]):
        following = following[1:]
    return bool(following) and (following[0] == NEG or
                                (language == "ko" and following[0] in _KO_NEGATIONS))


def _placed(rule: LemmaRule, words: list[str], said: list[tuple[str, int]],
            language: str) -> list[int] | None:
    """Where each part of `rule` is said (the first fitting place of each), or None when the
    parts do not fit in `WINDOW` words, a `!` part is not negated, or a negation cancels it."""
    positions = []
    for i, part in enumerate(rule.parts):
        places = [p for p, lemma in enumerate(words) if lemma in part
                  and (i not in rule.negated or _negated(words, p, language))]
        if not places:
            return None
        positions.append(places[0])
    if said[max(positions)][1] - said[min(positions)][1] > WINDOW:
        return None
    last = max(positions)
    last_part = positions.index(last)
    if last_part not in rule.negated and _negates(words[last + 1:last + 3], language):
        return None
    if language == "en" and NEG in words[max(0, min(positions) - 3):min(positions)]:
        return None
    return positions
