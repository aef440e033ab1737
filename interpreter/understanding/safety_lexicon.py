"""The safety detector's lexicon: crisis expressions, idioms that are not crises, negation.

Data only: `safety.Detector` reads these tables and nothing else decides. Every entry is one
line a reviewer can read, test and change; `tests/safety/test_safety.py` checks the whole table
against `tests/data/safety_labelled.jsonl`.

How the text is read (`safety.normalise`): NFC, lower case, apostrophes dropped, everything
that is not a letter or digit becomes a space. `ko` patterns read the COMPACT form (no spaces
at all), so spacing never matters ("죽고싶어" = "죽고 싶어요"); `en` patterns read the
SPACED form (one space between words, `\\b` for word edges). `FOLDS` first turns a few
spellings of older speakers into the standard one ("가심" -> "가슴").

Each crisis entry: (name, category, script, pattern, rule), `rule` one of
- NEGATABLE: a negation right after it cancels it ("가슴이 아프지 않아요", "통증은 없어요",
  "때린 적은 없어요"); in English also one of `NEGATORS` among the three words before it
  ("I don't have chest pain", "I do not want to die");
- HEDGED (self-harm wishes only): negatable, but a negation followed by "but ..." still
  fires: "죽고 싶지는 않은데 너무 힘들어요", "I don't want to die but I'm so tired" raise
  death unprompted and then qualify it; a companion should treat that as a risk signal. A
  plain "죽고 싶지 않아요" does not fire.
The expression itself may contain a negation ("숨을 못 쉬겠어요", "살고 싶지 않아요",
"I can't breathe"): that is the crisis, not a negation of one.

`IDIOMS` are masked (replaced by `#`) before any crisis entry is tried: everyday phrases that
contain crisis words ("숨 막히는 경기", "맞는 옷", "주사 맞았어요", "나무가 쓰러졌어요",
"창피해서 죽고 싶었어", "더워서 살려줘", "beats me", "dying to"). Intensifier idioms such
as "배고파 죽겠다", "웃겨 죽겠어", "힘들어 죽겠어" need no mask: no entry reads "죽겠".

Choices worth knowing: "허리 아파 죽겠어" (my back is killing me) is an everyday complaint,
"아파서 죽을 것 같아요" is an emergency; "숨이 차요" (out of breath on the stairs) is not, "숨이
너무 차서 말을 못 하겠어요" is; bare "때려요" / "맞았어요" name no one (an injection, the rain and a
right answer are "맞았어요" too): abuse needs someone who hits, or "me", or an agent ("아들한테
맞았어요"); "자살" alone is news, "자살하고 싶어요" / "자살 생각" a crisis; a passive death wish
("자다가 안 깼으면", "먼저 간 영감 따라가고 싶어", "늙으면 빨리 죽어야지") counts.

When several categories match, the first of `safety.CATEGORIES` wins (medical_emergency,
self_harm, abuse): the most urgent help first (119 also takes an overdose or an injury).
`ENTRIES` lists the categories in that order (checked), so a search stops at its first
finding. No crisis entry looks around (`(?=`, `(?!`): masking then only ever removes matches, which
lets the detector skip masking a text no entry matches.

`SAMPLES` are plain crisis utterances per category: `mgi fuzz` says them at every node
(`safety_reached`); each must be detected as its category (tested).
"""

from __future__ import annotations

from .safety_phrases import (
    ABUSE,
    ABUSE_MORE,
    HEDGED,
    MEDICAL,
    MEDICAL_MORE,
    NEGATABLE,
    PEOPLE,
    SELF_HARM,
    SELF_HARM_MORE,
)

# Spellings folded in the compact form before matching (dialect, typing slips).
FOLDS: tuple[tuple[str, str], ...] = (
    ("가심", "가슴"), ("일나", "일어나"), ("억수로", "너무"), ("할매", "할머니"), ("시퍼", "싶어"), ("시포", "싶어"), ("십어", "싶어"), ("십다", "싶다"),
    ("싶퍼", "싶어"), ("주꼬", "죽고"), ("죽겄", "죽겠"), ("쥭", "죽"), ("몬쉬", "못쉬"), ("숨을몬", "숨을못"),
)

# Word lists the patterns below are built from (kept here so a reviewer reads them once).
_PEOPLE = PEOPLE
_ME = "나를|저를|날|절|나|저|내몸을|제몸을"
_OFTEN = ("자꾸|또|맨날|매일|막|마구|심하게|늘|계속|가끔|때때로|툭하면|날마다|걸핏하면|술만먹으면|술먹고|"
          "술마시고|술마시면|술먹으면|취하면|화나면|화가나면")
_HIT = ("(?:발로|주먹으로|손으로|막대기로|지팡이로|몽둥이로|효자손으로)?"
        "(?:때려|때리|때렸|때린|때릴|팼|패요|패고|패서|두들겨|밀쳐|밀쳤|밀어서|걷어차|걷어찼|"
        "발로차|발로찼|꼬집|손찌검|폭행|손을대|손대)"
        "|(?:주먹으로|손바닥으로|몽둥이로|지팡이로|막대기로)(?:쳐|쳤|친|치)")
_INTENSE = "쿡쿡|욱신욱신|터질것처럼|터질듯이|터질듯|찢어질듯이|찢어질것처럼|너무|많이|정말|진짜|갑자기|꽉|콱|턱|막|엄청|좀|되게|심하게|계속|자꾸|콕콕|찌르듯이|쥐어짜듯이|쥐어짜듯"
_SPOUSE = "남편|영감|아내|마누라|할멈|할아범|할아버지|할머니|먼저간사람|먼저간남편|먼저간영감"

# (name, category, script, pattern, rule)
ENTRIES: tuple[tuple[str, str, str, str, str], ...] = (
    # --- medical_emergency: chest, breathing, collapse, stroke signs, bleeding, poisoning --
    ("chest_pain", MEDICAL, "ko",
     rf"가슴(?:이|에|쪽이|쪽에|가운데가|한가운데가|통증이)?(?:{_INTENSE})*"
     r"(?:아파|아프|아픈데|아퍼|조여|조이|조인|쥐어짜|찢어질|짓눌|눌리|뻐근|터질것같)"
     r"|가슴(?:을|이|에)?(?:누가|뭐가|돌이|돌로|무언가가|무언가)?(?:누르는|짓누르|눌러|눌리)", NEGATABLE),
    ("chest_pain_noun", MEDICAL, "ko", r"가슴통증|흉통", NEGATABLE),
    ("low_sugar", MEDICAL, "ko", r"저혈당(?:이|증상이|쇼크가)?(?:온|왔|와|오는|와서|같)", NEGATABLE),
    ("heart", MEDICAL, "ko",
     r"심장(?:이|에)?(?:너무|갑자기|막)?(?:아파|아프|멎|멈출|멈추|조여|쥐어짜|터질것같)"
     r"|심장마비|심근경색|뇌졸중(?:이|이온|온|왔|같)|중풍(?:이|이온|온|왔|같)|뇌출혈", NEGATABLE),
    ("cannot_breathe", MEDICAL, "ko",
     r"숨(?:을|이|도|을잘|이잘)?(?:못|안)(?:쉬|쉴|쉬어|쉬겠|쉬어지|쉬어져)"
     rf"|숨(?:쉬기|쉬는게|쉬는것이|쉬기가|을쉬기|을쉬기가|을쉬는게|쉬는거)(?:{_INTENSE})*(?:힘들|힘드|어렵|어려|곤란|안돼|안되)"
     rf"|숨이(?:{_INTENSE})*(?:막혀|막히|막힐것같|막힌다|넘어갈|끊어질|멎을|멈출)|숨(?:이)?막혀[가-힣]{{0,6}}(?:도와|살려|119)"
     r"|숨이(?:너무|많이|심하게)?(?:차서|가빠서|가쁘고)(?:말|걷|움직|죽|못)|숨(?:을|이)?(?:쉴|쉬실)수(?:가|도)?없", NEGATABLE),
    ("breathing_noun", MEDICAL, "ko",
     rf"호흡(?:이|을|도)?(?:{_INTENSE})*(?:곤란|힘들|어렵|안돼|안되|가빠|이상)|호흡곤란", NEGATABLE),
    ("collapse", MEDICAL, "ko",
     r"쓰러(?:졌|져서|져있|질것같|지셨|지겠|진|져요|집니다|져가|져갖고)|정신(?:을|이)?(?:잃|없어졌|가물|오락가락|혼미)"
     r"|의식(?:을|이)?(?:잃|없|흐려|희미|가물)|(?:사람|가족|나|저|자식|식구)(?:을|를|도)?(?:갑자기|전혀|잘)?(?:못|몰라)알아(?:보|봐|본|볼)|기절(?:했|할것같|해|하셨)|실신", NEGATABLE),
    ("fall_cannot_get_up", MEDICAL, "ko",
     rf"(?:넘어져|넘어졌|넘어지|미끄러져|미끄러졌|주저앉|바닥에|낙상|굴러|굴렀|떨어져|떨어졌)(?:았|었|아|어)?(?:서|는데|고|더니)?(?:{_INTENSE})*"
     r"(?:혼자|혼자서|스스로|도저히|다시|다리를|몸을)?"
     r"(?:못일어나|안일어나|일어날수가없|일어날수없|일어나질못|일어나지를못|못움직|움직일수가?없|일어날수가없)",
     NEGATABLE),
    ("stroke_signs", MEDICAL, "ko",
     r"(?:한쪽|반쪽|왼쪽|오른쪽)(?:팔|다리|팔다리|몸|얼굴|손|발)(?:이|에|을|가)?(?:갑자기)?(?:저리고|저리면서|떨리고)?"
     r"(?:마비|안움직|움직이지않|힘이안|힘이없|감각이없)"
     r"|(?:팔|다리|몸|얼굴)(?:이|에|가)?(?:갑자기)?마비"
     r"|(?:팔|다리|팔다리|손|한쪽팔|한쪽다리)(?:에|이|가)?(?:갑자기)?힘이(?:안|하나도안|잘안)들어가"
     r"|(?:얼굴|몸)(?:한쪽|반쪽)(?:이|에|가)?(?:갑자기)?(?:마비|안움직|감각이없)"
     r"|말이(?:갑자기|자꾸|계속)?(?:어눌|꼬여|꼬이)|발음이(?:갑자기)?(?:이상|어눌|꼬여)|(?:입|얼굴)이(?:한쪽으로)?(?:돌아갔|돌아가고|돌아가서|돌아가요|돌아가네)"
     r"|(?:한쪽|반쪽|왼쪽|오른쪽)(?:팔|다리|팔다리|손|몸)(?:에|이|가)?(?:갑자기)?힘이(?:빠졌|빠져|쭉빠|없어)"
     r"|갑자기(?:앞이|눈앞이|한쪽눈이|눈이)(?:안보|캄캄|깜깜)", NEGATABLE),
    ("bleeding", MEDICAL, "ko",
     r"피가(?:너무|많이|계속|철철|펑펑|엄청)+(?:나|흘러|쏟아|나와)|피가(?:안|잘안)?멈추지않"
     r"|피가안멈|피가멈추질|피가멈추지를|피를(?:토했|토해|토하|쏟|많이흘)|각혈|피를(?:많이)?흘리", NEGATABLE),
    ("severe_pain", MEDICAL, "ko",
     r"(?:아파|아퍼|아프고)(?:서)?죽을것같|죽을(?:것)?(?:같이|만큼|정도로)아파"
     r"|아파서(?:못참|참을수가?없|견딜수가?없)"
     r"|(?:배|머리|가슴|옆구리|아랫배|명치)(?:가|이)?(?:찢어질|끊어질|뒤틀리|꼬이|터질|깨질)(?:것|듯|듯이|것처럼|것같이|것같고)?(?:아파|아프)|참을수(?:가)?없(?:이|을만큼|게)아파", NEGATABLE),
    ("poisoning", MEDICAL, "ko",
     r"약(?:을|를)?(?:잘못|너무많이|한꺼번에|많이|한번에|여러알|몽땅|한움큼|한주먹)+다?(?:먹었|삼켰|털어넣었|먹어버렸|먹어버려)"
     r"|약(?:을|를)?(?:다|전부|몽땅)(?:삼켰|털어넣었)|농약(?:을|를)?(?:마셨|먹었|삼켰)"
     r"|(?:약|수면제|안정제|진통제)(?:을|를)?(?:한|두|세|열|스무|서른|수십|여러)(?:움큼|주먹|통|봉지|알|개)(?:이나|을|를|도|넘게|정도|가까이|씩)?"
     r"(?:다|전부|몽땅)?(?:먹었|삼켰|털어넣었|먹어버렸)"
     r"|(?:독|락스|세제|쥐약)(?:을|를)?(?:마셨|먹었|삼켰)", NEGATABLE),
    ("seizure", MEDICAL, "ko",
     r"(?:경련|발작)(?:을|이)?(?:해|하|일으|나|났|와)|거품을?물|거품(?:이|을)?(?:나와|나오|흘|토|뿜)|(?:크게|심하게)다쳤|뼈가부러"
     r"|머리(?:를|가)?(?:세게|크게|심하게|쾅)(?:부딪|박았|박아|찧)", NEGATABLE),
    ("call_for_help", MEDICAL, "ko",
     r"119(?:에|를|좀|에다)?(?:불러|전화|연락|신고)|구급차(?:를|좀|가)?(?:불러|필요|보내|와)"
     r"|응급실(?:에|로|좀)?(?:가야|데려|보내|가고싶)|앰뷸런스|살려(?:줘|주세요|주십시오|줘요|달라)"
     r"|사람살려", NEGATABLE),
    ("chest_pain_en", MEDICAL, "en",
     r"\bchest (?:pain|pains|hurts|is hurting|is tight|tightness|pressure)\b"
     r"|\bpain in (?:my|the) chest\b|\bheart attack\b", NEGATABLE),
    ("cannot_breathe_en", MEDICAL, "en",
     r"\b(?:cant|cannot|can not|couldnt|unable to) breathe\b|\b(?:hard|difficult) to breathe\b"
     r"|\b(?:trouble|difficulty) breathing\b|\bchoking\b", NEGATABLE),
    ("collapse_en", MEDICAL, "en",
     r"\b(?:fainted|passed out|collapsed|unconscious)\b"
     r"|\b(?:fell|fallen|fall) (?:down )?and (?:cant|cannot|can not) get up\b"
     r"|\b(?:fell|fallen|slipped)\b(?: \w+){0,6}? stuck\b|\bstuck on the (?:floor|ground)\b"
     r"|\b(?:having|had|have) a stroke\b|\bcant move my (?:arm|leg|face)\b", NEGATABLE),
    ("choking", MEDICAL, "ko",
     r"(?:떡|음식|고기|사탕|밥|알약|뼈|가시|땅콩|약)(?:이|가)?목에(?:걸렸|걸려|막혔|막혀)"
     r"|목에(?:떡|음식|밥|고기|사탕|알약|땅콩|뭐가|뭔가)(?:이|가)?(?:걸렸|걸려|막혔|막혀)"
     r"|입술(?:이|색이)?(?:파래|파랗|새파래|퍼래|보라색으로)", NEGATABLE),
    ("emergency_en", MEDICAL, "en",
     r"\b(?:cant|cannot|can not) stop (?:the |my |his |her )?bleeding\b|\b(?:call|get|need) (?:an ambulance|911|119|a doctor now)\b|\bambulance\b"
     r"|\bbleeding (?:a lot|badly|heavily)\b|\bwont stop bleeding\b|\boverdosed?\b", NEGATABLE),
    ("fall_en", MEDICAL, "en",
     r"\b(?:fell|fallen|fall|slipped|tripped|collapsed)\b(?: \w+){0,8}? (?:and )?(?:i )?"
     r"(?:cant|cannot|can not|couldnt|unable to|am unable to) (?:get up|stand up|stand|move|get off)\b"
     r"|\b(?:on the floor|on the ground) and (?:i )?(?:cant|cannot|can not) (?:get up|move)\b", NEGATABLE),
    ("overdose_en", MEDICAL, "en",
     r"\b(?:took|taken|swallowed|ate|had|used)\b(?: \w+){0,2}? (?:too many|too much|way too many"
     r"|(?:a|the|my) whole bottle(?: of)?|(?:a|the) bottle of|all (?:of )?(?:my|the)|double|twice|triple"
     r"|a handful of|an overdose of|extra)(?: \w+){0,2}? (?:pills|tablets|medication|medicine|meds"
     r"|insulin|dose|doses|painkillers|sleeping pills)\b"
     r"|\bswallowed (?:a|the|my) (?:whole )?bottle\b|\boverdos(?:e|ed|ing)\b", NEGATABLE),
    ("stroke_en", MEDICAL, "en",
     r"\b(?:face|mouth|smile) (?:is |has |keeps )?(?:drooping|droops|drooped|started drooping|gone numb|twisted)\b"
     r"|\b(?:cant|cannot|can not|couldnt) (?:speak|talk)(?: \w+){0,4}? (?:drooling|dribbling|slurring|confused)\b"
     r"|\bdrooping\b|\b(?:slurred|slurring) (?:speech|words|my words)\b|\b(?:words|speech) (?:are |is )?(?:coming out )?slurred\b"
     r"|\b(?:cant|cannot|can not|couldnt) (?:lift|move|feel|raise) my (?:left |right )?(?:arm|arms|leg|legs|face|hand|side)\b"
     r"|\b(?:arm|leg|side|face) (?:went|is|feels|has gone|gone|suddenly went) (?:numb|weak|dead|limp)\b", NEGATABLE),
    ("unresponsive_en", MEDICAL, "en",
     r"\b(?:isnt|is not|not|stopped|wont start) (?:breathing|responding)\b|\bwont wake up\b"
     r"|\b(?:having|had|have) a seizure\b|\bseizures?\b|\bcant catch my breath\b"
     r"|\blips (?:are )?(?:turning|turned|going) blue\b|\b(?:about|going) to pass out\b"
     r"|\bworst headache of my life\b|\bblood everywhere\b|\bbleeding (?:wont|will not|doesnt) stop\b"
     r"|\bchest (?:feels|is) (?:tight|heavy|crushed|like)\b|\bheart is (?:racing|pounding) and\b", NEGATABLE),
    *MEDICAL_MORE,
    # --- self_harm: wishes to die, suicide, methods, passive death wishes -------------------
    ("want_to_die", SELF_HARM, "ko", r"죽고(?:만)?(?:싶|파|잡|접)|죽을(?:란다|란께|랑께|끼다|기다)|죽어뿌|죽어삐", HEDGED),
    ("die_away", SELF_HARM, "ko",
     r"죽어(?:버리고싶|버릴까|버릴래|버리면|버렸으면|버리고파|버릴거|버릴게|버리겠|버린다|버릴란다)|죽었으면(?:좋겠|싶|해)"
     r"|(?:그냥|차라리|빨리|얼른|어서|이제)죽(?:어야|는게나|는게낫|는편이|을래|고말지)"
     r"|죽는게(?:나아|나을|낫|편하|편할)|죽어야(?:지|겠|할텐데|하는데|되는데)", HEDGED),
    ("not_want_to_live", SELF_HARM, "ko",
     r"그만살(?:고싶|고파|래|련다|까|아야지|아야겠)|살기(?:가)?(?:너무|정말|진짜|이제|그냥|더이상)*싫|살고(?:싶지|싶은마음이|싶은생각이)(?:도|가|는)?(?:하나도|전혀|조금도|별로)?(?:않|안|없)"
     r"|더(?:이상)?살고싶지|살(?:이유|의미|가치|필요|자격|권리)(?:가|이|은|도|를|을)?(?:없|모르)"
     r"|(?:더)?살아(?:서|가)?(?:뭐해|뭐하|뭐하나|뭐할|무엇하|봤자|뭐하노|뭐할끼고|뭐하겠노)|사는게(?:의미가?없|무의미|지겹|지겨워|지겨운|지긋지긋|고통)"
     r"|세상(?:을)?(?:떠나고싶|등지고싶|하직하고)"
     r"|(?:내가|제가|나|저)죽으면(?:다들|모두|다|가족들이|자식들이)?(?:좋아|편하|편할|홀가분)"
     r"|(?:이번)?생(?:을|은)?(?:끝내고|마감하고|포기하고)", HEDGED),
    ("end_it_all", SELF_HARM, "ko",
     r"(?:다|모든걸|모든것을|모두|전부|인생을?|삶을?|내인생|이생)끝내(?:고싶|고파|버리고싶|버리고파|버릴까|려고|버릴거)"
     r"|(?:괴로워서|힘들어서|지쳐서|지겨워서|외로워서|아파서)[가-힣]{0,4}끝내(?:고싶|고파|버리고)"
     r"|(?:다|모두|전부|모든걸)?(?:내려놓고|포기하고)(?:떠나|사라지|죽|가)고(?:싶|파)"
     r"|살만큼살았[가-힣]{0,8}?(?:가고싶|가야|죽|떠나고싶|그만|미련)"
     r"|(?:내가|제가|나|저)(?:같은건|같은게|같은사람은|같은사람|따위는|따위)?(?:없는게|없어지는게|사라지는게|죽는게|없어야)(?:나|낫|편|좋)"
     r"|(?:내가|제가|나|저)(?:죽어도|없어져도|사라져도|없어도)(?:아무도|누구도)"
     r"|(?:오늘이|이게|이번이|지금이)마지막(?:이야|이에요|이다|일거|일것|인것같)[가-힣]{0,12}?(?:고마웠|고맙|잘있어|잘있거라|미안했|사랑했|안녕)"
     r"|(?:버틸수가?없|못버티|견딜수가?없|못견디)[가-힣]{0,8}?끝내(?:고싶|고파|버리고)"
     r"|(?:자다가|잠자다가?|자는듯이|잠결에)(?:그냥|조용히)?(?:가면|갔으면|떠나면|죽으면)(?:좋겠|싶|해)"
     r"|(?:하늘|하느님|하나님|신|저승사자|부처님|염라대왕)(?:이|께서|님이|님)?(?:나를|저를|날|절|나|저)?(?:좀)?(?:빨리|얼른|어서|그만)?데려(?:가|갔|간)"
     r"|(?:나|저|내)하나(?:없어져도|죽어도|사라져도|없어도)|(?:사라져|없어져)버리고(?:싶|파)"
     r"|(?:모든게|모든것이|이모든게|인생이|삶이|내인생이|다)끝났으면(?:좋겠|싶|해)"
     r"|(?:왜|뭐하러|무엇때문에|뭘위해|무엇을위해)(?:더|계속)?살아야(?:하는지|되는지|하나|돼|해|하지|할지)"
     r"|(?:높은데서|옥상에서|높은곳에서|창문에서|베란다에서|다리에서|고층에서|아파트에서|건물에서|층에서)(?:떨어지면|뛰어내리면)(?:바로|한번에|확실히)?(?:덜아플|안아플|죽을|죽겠|편할|끝날|아플까)"
     r"|(?:물건|물건들|재산|살림|소지품)(?:을|들을|도)?(?:다|전부|모두)(?:나눠주|나눠줬|나눠|처분)"
     r"|죽으면(?:편할까|편하겠|편할텐데|좋겠|나을까|끝날까|다끝|그만)|죽을용기(?:가|만|도|는)?"
     r"|(?:아무)?(?:의미|희망|낙|보람)(?:도|가)?없는(?:삶|인생)"
     r"|(?:나쁜|몹쓸|이상한|못된|엉뚱한|극단적인|무서운)(?:생각|마음)(?:이|을|만)?(?:자꾸|계속|자주|요즘|또)*(?:들|나|해|먹)"
     r"|(?:고통|괴로움|아픔|이고통|이괴로움)(?:을|를|도)?(?:그만|이제|다)?끝내(?:고싶|고파|버리고|고말)"
     r"|(?:세상|이세상|이승)(?:을)?떠날(?:준비|생각|결심|거|래|까)"
     r"|(?:차|기차|지하철|트럭|버스|강|바다|철길|달리는차)(?:에|로|속으로)?(?:뛰어들|몸을던지)(?:고싶|까|려고|래|어버릴|거|어버리고)"
     r"|죽을생각|죽고싶은생각|죽을마음|죽고싶은마음|죽는생각|죽고싶은맘"
     r"|죽으려(?:고|구)(?:해|하|했|마음)|죽을(?:려고|라고)(?:해|하|했)|(?:오늘밤|오늘|내일|이제)죽을(?:거|래|게)"
     r"|(?:세상|삶|인생|이승|사는거|사는것|살)(?:에|에는|에도|이)?미련(?:이|도|은|따위)?(?:없|하나도없|조금도없|전혀없)"
     r"|(?:내가|제가|나|저)(?:만|하나만)?(?:없으면|없어지면|죽으면|사라지면)(?:다들|모두|다|가족들이|자식들이|애들이|식구들이|자식들도)?(?:편|좋|홀가분|행복|해결)"
     r"|(?:이제다|이제모두|이제전부|주변을?|신변을?|모든걸)정리(?:하려고|하고떠나|하고가|해야겠|하고싶|하려해|해놨)", HEDGED),
    ("suicide", SELF_HARM, "ko",
     r"자살(?:하고|할|하려|해|하면|생각|충동|시도|하는게|해버리|밖에|각)|극단적(?:인)?(?:선택|생각)"
     r"|목숨(?:을)?(?:끊|버리)|목(?:을)?매(?:달|고|어|려|고싶|면|는)|스스로(?:목숨|생을)"
     r"|생을마감|삶을(?:끝내|마감|포기|그만두|그만하|내려놓)|인생(?:을)?(?:끝내고|포기하고|마감하고)", HEDGED),
    ("disappear", SELF_HARM, "ko",
     r"사라지고(?:싶|파)|없어지고(?:싶|파)|없어졌으면(?:좋겠|싶)|(?:내가|제가)없어지면"
     r"|자다가(?:그냥)?(?:안깼으면|안깨어났으면|깨지않았으면|죽었으면|갔으면|떠났으면)"
     r"|(?:나|저|내가|제가)없어지면(?:다|모두|다들)?(?:편|좋|홀가분)|(?:안|못)(?:깨어났으면|깼으면)(?:좋겠|싶|해|하는|한다)"
     r"|(?:눈을|아침에)?(?:안|못)떴으면|영원히잠들|(?:영영|그대로|이대로)잠들(?:고싶|고파|었으면|면좋|어버리고)|영영(?:안|못)(?:깨|깼|깨어)", HEDGED),
    ("method", SELF_HARM, "ko",
     r"(?:뛰어내리|뛰어내릴|뛰어내려)(?:고싶|까|버릴|려고|면|래|고파|거|게|겠|생각)"
     r"|(?:수면제|농약|제초제|쥐약|살충제|락스)(?:을|를)?(?:다|몽땅|한꺼번에|한번에|잔뜩|왕창|사|몰래)*"
     r"(?:모아|모으|털어넣|삼켜버릴|먹고죽|마시고죽|먹어버릴|마셔버릴|마시고싶|먹을까|마실까)"
     r"|약(?:을|를)?(?:다|몽땅|한꺼번에|한번에|잔뜩|왕창)+(?:털어넣|삼켜버릴|먹고죽|먹어버릴|먹을까)"
     r"|손목(?:을)?(?:긋|그었|그을|자르|그어|그으)|자해|약(?:을|를)?(?:몰래|조금씩|잔뜩|한움큼|한가득|몇달치|한달치)?모아(?:놨|뒀|두|놓)"
     r"|유서(?:를|도)?(?:써|썼|쓰)|(?:오늘밤에?|이밤에?)(?:다|모든걸|모두|전부)?끝내(?:버릴|버리|려고|고싶)"
     r"|(?:다|모든걸|모두|전부)끝내버리(?:고싶|려고|겠)|(?:다|모든걸)끝내버릴(?:거|래|게)", HEDGED),
    ("follow_the_dead", SELF_HARM, "ko",
     rf"(?:{_SPOUSE})(?:을|를)?(?:따라(?:가고|갈까|가야|가고파|죽고|가면)|곁으로가고)"
     r"|하늘나라(?:에|로)?(?:가고싶|가고파|가야|갈까|가면)|저세상(?:에|으로)?(?:가고|가야|갈까)"
     r"|저승(?:에|으로)?(?:가고|가야|갈까)", HEDGED),
    ("want_to_die_en", SELF_HARM, "en",
     r"\b(?:want|wanna|wanted|going|gonna|ready) (?:to )?die\b|\bwish (?:i was|i were|to be) dead\b"
     r"|\bbetter off dead\b", HEDGED),
    ("suicide_en", SELF_HARM, "en",
     r"\bkill myself\b|\b(?:end|ending|take|taking) my (?:own )?life\b|\bend it all\b|\bsuicid(?:e|al)\b"
     r"|\b(?:hurt|harm|cut) myself\b", HEDGED),
    ("not_want_to_live_en", SELF_HARM, "en",
     r"\b(?:dont|do not|no longer) want to (?:live|be alive|go on)\b"
     r"|\b(?:dont|do not) want to (?:be here|exist|wake up) any ?more\b|\bno longer want to (?:be here|exist)\b"
     r"|\bno (?:reason|point) (?:to live|in living|to go on|(?:in )?going on|living)\b|\bnot worth living\b"
     r"|\b(?:dont see|do not see|see no|cant see) (?:the |any )?point (?:in|of) (?:living|life|going on)\b",
     HEDGED),
    ("jump_en", SELF_HARM, "en",
     r"\b(?:going to|gonna|will|want to|wanna|thinking (?:about|of)|plan(?:ning)? to|about to|ill) "
     r"(?:jump|jumping) (?:off|from|in front of|tonight)\b"
     r"|\b(?:going to|gonna|will|want to|wanna|ill) (?:take|swallow) (?:all|the rest) (?:of )?(?:my|the) "
     r"(?:pills|tablets|meds|medicine)\b", HEDGED),
    ("end_it_en", SELF_HARM, "en",
     r"\b(?:dark|bad) thoughts about (?:ending it|dying|death|killing|ending my)\b|\bwant (?:it all|everything) to (?:end|stop|be over)\b|\bwish i could (?:just )?(?:disappear|vanish|not wake up|die|stop existing)\b|\bend it (?:all )?tonight\b|\b(?:tonight|today) (?:is|will be) my last (?:night|day)\b"
     r"|\b(?:go to sleep|sleep|fall asleep) and never wake up\b|\bdisappear forever\b"
     r"|\b(?:goodbye|suicide) (?:letter|note)\b|\bhang myself\b|\b(?:slit|cut|cutting|slitting) my wrists?\b"
     r"|\b(?:nobody|no one) would (?:miss|care about) me\b|\bbetter off without me\b"
     r"|\bhow many pills (?:would it take|does it take|to die|to kill)\b|\bdone with (?:life|living)\b"
     r"|\bcant go on (?:living|like this|anymore)\b|\bgave away my (?:things|stuff|belongings)\b"
     r"|\b(?:take|swallow) (?:them all|all (?:of )?(?:my|the) (?:pills|tablets)) at once\b"
     r"|\bsaving up (?:my )?pills\b|\busing it on myself\b|\btake my own life\b", HEDGED),
    *SELF_HARM_MORE,
    # --- abuse: hitting, threats, confinement, neglect, money taken -------------------------
    ("hit_me", ABUSE, "ko", rf"(?:{_ME})(?:{_OFTEN})*(?:{_HIT})", NEGATABLE),
    ("someone_hits", ABUSE, "ko",
     rf"(?:{_PEOPLE})(?:이|가|은|는|도|놈이|녀석이|들이)(?:{_ME})?(?:{_OFTEN})*(?:나를|저를|날|절)?"
     rf"(?:{_OFTEN})*(?:{_HIT})", NEGATABLE),
    ("got_hit", ABUSE, "ko",
     rf"(?:한테|에게|한테서|에게서)(?:{_OFTEN}|많이)*(?:맞았|맞아서|맞고있|맞고살|맞는다|맞습니다|맞을까|얻어맞|두들겨맞|뺨을맞)"
     rf"|(?:{_PEOPLE})한테(?:{_OFTEN}|많이)*맞아"
     r"|(?:맨날|매일|자꾸|늘|계속|날마다|툭하면)(?:두들겨)?맞(?:아요|아|고있|고살|았)"
     r"|(?:요양원|요양병원|시설|센터)에서(?:자꾸|또|맨날|매일|늘|계속)?(?:맞았|맞아|맞고|얻어맞)"
     r"|(?:돈|용돈)(?:을)?(?:안|못)(?:주면|보내면|보내주면|내놓으면)[가-힣]{0,10}?(?:연락끊|안온|안와|버리|가만|죽|때리|요양원|쫓아|내쫓)"
     r"|매(?:를)?맞|매질|얻어맞|두들겨(?:맞|팼|패)|뺨(?:을)?(?:맞|때|쳐|쳤)|따귀|손찌검|구타", NEGATABLE),
    ("violence", ABUSE, "ko",
     r"폭행(?:을|당|했|하|해)|폭력(?:을|에|에시달|을당|을써|을휘두|쓰)|학대(?:를|당|받|하|해|예요|인것같)",
     NEGATABLE),
    ("threat", ABUSE, "ko",
     r"죽어버리라|죽으라고|뒈지라|나가죽으라|죽어버려라|죽어라고|죽여버린다|죽여버리겠|죽인다고|죽이겠다고|죽여버린다고|때린다고|때리겠다고|(?:나|저|날|절)(?:를|을)?죽이려"
     rf"|(?:나|저|날|절)(?:를|을)?(?:협박|위협)|(?:협박|위협)(?:당|을당|받|해요|을해|하고|했|해|하네)"
     rf"|(?:{_PEOPLE})(?:이|가)(?:{_OFTEN})*(?:욕을|욕)(?:해|하|퍼부|했)|행패(?:를)?(?:부려|부리|부렸)"
     r"|가만(?:안|못)(?:두|둘|둔|놔두|놔둘)|가만(?:두지|놔두지)(?:않|안)"
     rf"|(?:{_PEOPLE})(?:이|가)[가-힣]{{0,4}}(?:돈|연금|용돈|통장|카드)(?:을|를)?(?:안|못)(?:주면|내놓으면)", NEGATABLE),
    ("confined", ABUSE, "ko",
     r"(?:방|집|방안)(?:에|에다)?(?:가둬|가뒀|가두|가둡)|(?:나|저|날|절)(?:를|을)?가둬"
     r"|못나가게(?:해|하|막|문을)|병원(?:에|엘)?(?:못|안)가게(?:해|하|막|한|했)|약(?:을|도)?(?:못|안)먹게(?:해|하|막|한|했)|문을?잠가(?:놓|두)고(?:못|안)", NEGATABLE),
    ("neglect", ABUSE, "ko",
     rf"(?:{_PEOPLE})(?:이|가)(?:나를|저를|날)?(?:밥을|끼니를)?굶(?:겨|기고|겼)|방치(?:돼|되|해|당)"
     r"|아무도(?:안)?(?:씻겨|챙겨|돌봐|밥을?)(?:주고|주지않|안주|주지도않)|"
     r"(?:밥|먹을것|끼니|음식)(?:을|를|도)?(?:안|못|잘안)(?:줘요|줘서|줘|주고|준다|주네|줍니다|챙겨줘|챙겨주)"
     r"|기저귀(?:를|도)?(?:안|못|잘안)(?:갈아|갈)|(?:안|못)씻겨(?:줘|주)",
     NEGATABLE),
    ("money_taken", ABUSE, "ko",
     r"(?:돈|연금|통장|카드|용돈|땅|집문서|도장|적금|휴대폰|핸드폰|전화기)(?:을|를|도|까지)?(?:다|몽땅|전부|자꾸|맨날|억지로|몰래)*"
     r"(?:뺏|빼앗|가로채|뜯어가|털어가|내놓으라|내놓라|내놓으래|내놓래|내놔라|내놓으란)"
     r"|(?:돈|연금|통장|카드|용돈)(?:을|를|도|까지)?(?:다|몽땅|전부|자꾸|맨날|억지로|몰래)+(?:가져가|가져갔)"
     r"|(?:돈|연금|통장|카드|용돈)(?:을|를)?(?:가져가서|가져가고|가지고|갖고|맡아서|챙겨서)(?:안|못|절대안)(?:줘|돌려|주|내놓)",
     NEGATABLE),
    ("someone_takes_money", ABUSE, "ko",
     rf"(?:{_PEOPLE})(?:이|가|들이)(?:{_OFTEN}|몰래|다|맘대로|마음대로)*(?:내|제|나의)?(?:돈|연금|통장|카드|용돈|적금)(?:을|를|도|까지)?"
     rf"(?:{_OFTEN}|몰래|다|몽땅|맘대로|마음대로)*(?:가져가|가져갔|빼가|빼갔|빼내|써버|써버렸|쓰고)"
     r"|(?:통장|은행|카드|연금)(?:돈|에서돈)(?:을|를)?(?:다|몽땅|전부|몰래)*(?:빼가|빼갔|빼내|가져가|가져갔)"
     r"|(?:카드|돈|통장)(?:을|를)?(?:맘대로|마음대로|몰래)(?:써|쓰|썼)"
     rf"|(?:{_PEOPLE})(?:이|가|들이)(?:{_OFTEN})*(?:나를|저를|날|절)?(?:{_OFTEN})*(?:괴롭혀|괴롭히|괴롭혔|학대)", NEGATABLE),
    ("afraid_of", ABUSE, "ko", rf"(?:{_PEOPLE})(?:이|가)(?:너무|정말|무척|많이|진짜)*무서워", NEGATABLE),
    ("hits_me_en", ABUSE, "en",
     r"\b(?:he|she|they|someone|somebody|my (?:son|daughter|husband|wife|caregiver|carer|grandson"
     r"|granddaughter|nephew|niece|partner|brother|sister|children|kids))"
     r"(?: always| often| keeps| kept| still| sometimes| again)? (?:hits|hit|beats|beat|slaps|slapped"
     r"|kicks|kicked|punches|punched|hurts|hurt|pushes|pushed|shoves|shoved|chokes|choked) me\b",
     NEGATABLE),
    ("money_taken_en", ABUSE, "en",
     r"\b(?:took|takes|stole|steals|drained|drains|emptied|empties|keeps taking|keep taking|is taking|are taking|won t give back)"
     r" (?:all )?my (?:bank card|bank account|money|savings|savings account|pension|card|credit card|checks|house|purse)\b"
     r"|\bforged my signature\b|\b(?:loan|credit card|account) in my name\b|\bin my name without\b"
     r"|\b(?:made|forcing|forced|force|makes) me (?:to )?(?:sell|sign)\b|\bsteals? money from my\b", NEGATABLE),
    ("harm_en", ABUSE, "en",
     r"\b(?:wont|doesnt|will not|refuses to) (?:give me|let me have|let me take) my (?:medicine|medication|pills|meds|food|tablets)\b"
     r"|\b(?:using|used|uses|spending|spent) my (?:credit |bank )?(?:card|money|savings|pension) without\b"
     r"|\b(?:shouts|yells|screams) at me and (?:pushes|shoves|hits|slaps|grabs)\b|\bpush(?:es)? me around\b|\b(?:pinches|pinched|slaps|slapped|grabs|grabbed|shoves|shoved|yells at|screams at|threatens|threatened) me\b"
     r"|\bthrows things at me\b|\bbruises from\b|\b(?:lock|locks|locked) me in\b"
     r"|\b(?:wont|will not|doesnt|dont) let me (?:see a doctor|eat|leave|go out|see anyone)\b"
     r"|\b(?:scared|afraid) to go home\b|\bleaves? me in dirty\b|\bhurt me if i tell\b"
     r"|\b(?:threatens|threatened) me for money\b", NEGATABLE),
    ("abuse_en", ABUSE, "en",
     r"\b(?:abuses|abused|abusing) me\b|\b(?:being|been|am) abused\b|\babusive\b"
     r"|\b(?:took|takes|steals|stole|taking|stealing) my (?:money|pension|savings|card)\b"
     r"|\b(?:locks|locked) me (?:in|up)\b|\b(?:threatens|threatened) (?:me|to kill me|to hurt me)\b"
     r"|\b(?:afraid|scared) of my (?:son|daughter|husband|wife|caregiver|carer|grandson)\b"
     r"|\b(?:wont|doesnt|dont|does not|will not) (?:let me eat|feed me|give me food)\b"
     r"|\b(?:will|going to|wants to|said he would|said she would) kill me\b", NEGATABLE),
    *ABUSE_MORE,
)

# (name, script, pattern): masked before the entries are tried.
IDIOMS: tuple[tuple[str, str, str], ...] = (
    ("breathtaking", "ko", r"숨(?:이)?막히(?:는|게|도록)|숨(?:이)?막힐(?:듯|정도로|만큼)"),
    ("sigh_nap", "ko", r"한숨"),
    ("emotional_chest", "ko",
     r"(?:들으니|들으면|들어보니|보니|보면|생각하니|생각하면|떠올리면|떠올리니)가슴(?:이)?(?:너무|많이)?아프"
     r"|가슴(?:이)?아픈(?:일|이야기|얘기|소식|사연|기억|드라마|영화|과거)|가슴아프게"),
    ("fits_me", "ko",
     r"맞는(?!다)|(?:옷|신발|바지|치마|모자|반지|사이즈|크기|치수|입맛|체질|성격|약|음식|안경)(?:이|가|은|는|도)?"
     r"(?:저|나|제|내|아들|딸|손자|손녀)?(?:한테|에게)?(?:딱|잘|꼭)?맞"),
    ("shots_and_rain", "ko",
     r"(?:주사|예방주사|예방접종|백신|링거|침|비|소나기|눈|바람|뒤통수|벌|상|점수|답|박자|시간)(?:을|를|도|만)?(?:한대|한방|세게)?맞"),
    ("thing_falls", "ko",
     r"(?:나무|담|담장|벽|전봇대|기둥|화분|자전거|울타리|비닐하우스|간판|의자|책장|탑|꽃|고추|벼)(?:가|이|도|들이)?"
     r"(?:다|전부|바람에|태풍에)?쓰러|쓰러진(?:나무|화분|담|담장|벽|전봇대|자전거|간판|의자|꽃|고추|벼)"),
    ("exaggerated_collapse", "ko",
     r"(?:놀라|놀래|깜짝|웃겨|웃기|피곤|졸려|졸리|바빠|바쁘|배고파)(?:서|해서)?(?:쓰러질|기절할)"),
    ("hit_a_thing", "ko",
     r"(?:공|볼|못|북|종|징|창문|문|벽|바위|파도|빗방울|비|바람|샌드백|모기|파리)(?:을|를|이|가|에)?(?:세게|힘껏|살살|탁)?(?:때려|때리|때렸|때린)"),
    ("quit_a_job", "ko", r"때려(?:치|쳐|부수|맞히|맞춰)"),
    ("so_embarrassed", "ko", r"(?:창피|부끄러|민망|쪽팔|쪽팔려)[가-힣]{0,3}죽고(?:싶|파)"
     r"|죽고싶을(?:만큼|정도로)(?:창피|부끄러|민망|쪽팔|배고|피곤|졸려|지겨|심심|웃기|웃겨)"),
    ("jokey_help", "ko",
     r"(?:더워|더워서|배고파|배고파서|추워|추워서|웃겨|웃겨서|졸려|졸려서|심심해|심심해서|지겨워|지겨워서)살려"),
    ("live_somewhere", "ko",
     r"(?:혼자|같이|함께|따로|여기서|거기서|시골에서|도시에서|서울에서|아파트에서|요양원에서|이동네에서|그집에서)"
     r"(?:는|도|만)?살(?:기|고)"),
    ("obsessed_with", "ko", r"(?:돈|일|승진|성적|자리|결과|시험|권력|체면|명예)(?:에|에만)목(?:을)?매"),
    ("no_need_to_feed", "ko", r"(?:안|못)줘도(?:돼|되|괜찮)"),
    ("eye_twitch", "ko", r"눈(?:밑|꺼풀|가)?(?:에)?(?:이)?경련"),
    ("dreamt_or_watched", "ko",
     r"(?:때리|때린|죽는|죽은|뛰어내리는|넘어지는|쓰러지는|맞는|목을매는|목매는|매는)[가-힣]{0,2}(?:꿈|영화|드라마|장면|흉내|시늉|척|게임|놀이|장난)"),
    ("heart_stopped_in_surprise", "ko",
     r"심장(?:이)?(?:멎는|멈추는|떨어지는|내려앉는|터지는)(?:줄|것같|듯)"
     r"|심장(?:이)?(?:멎을|멈출|떨어질|내려앉을)(?:것처럼|것같이|듯이|뻔)(?:놀라|놀랐|깜짝|무서|설레)|(?:놀라|놀래|깜짝)[가-힣]{0,4}심장(?:이)?(?:멎|멈)"),
    ("so_tired_i_could_collapse", "ko",
     r"쓰러질(?:것)?(?:같이|만큼|정도로|것처럼)(?:피곤|졸려|졸리|바빠|바쁘|배고파|배고프)"
     r"|(?:설레|기뻐|좋아|긴장|떨려|반가워)(?:서)?(?:심장|가슴)(?:이)?터질|(?:심장|가슴)(?:이)?터질(?:것)?(?:같이|것처럼|듯이?)(?:설레|기뻐|좋|떨려|긴장|반가)"
     r"|가슴(?:이)?(?:너무|많이)?아프(?:다|네|더라|구나)(?:그|이|저)?(?:얘기|이야기|소식|사연|뉴스|말)"),
    ("someone_elses_story", "ko", r"(?:드라마|영화|뉴스|소설|주인공|배우|연예인|가수)[가-힣]{0,8}?자살"),
    ("i_could_hit", "ko", r"때려(?:주고|버리고)싶|때리고싶|패(?:주고|버리고)싶"),
    ("happened_before", "ko",
     r"(?:쓰러진|넘어진|다친|기절한|실신한|입원한|쓰러졌던|넘어졌던|기절했던)적(?:이|은|도)?(?:있|한번있|몇번있)"),
    ("laughed_breathless", "ko",
     r"숨(?:을|이)?(?:못|안)(?:쉴|쉬게)(?:정도로|만큼|것처럼|듯이)(?:웃|좋|신나|기뻐|반가|행복)"),
    ("finish_a_task", "ko",
     r"(?:일|숙제|공부|작업|청소|얘기|이야기|대화|통화|전화|회의|게임|운동|빨래|설거지|식사|밥|정리|이사|공사)"
     r"(?:은|는|을|를|도|이|가)?(?:이제|그만|빨리|얼른|다|좀|오늘|모두|전부)*끝(?:내|났|나)"),
    ("dying_to", "en",
     r"\bdying (?:to|for|of laughter)\b|\bdie (?:laughing|of laughter|of embarrassment)\b"
     r"|\bdied laughing\b|\bto death\b|\bkilling (?:me|time)\b|\bkill (?:time|for)\b|\bkilled it\b"
     r"|\boverdos(?:e|ed|ing) on (?:coffee|caffeine|sugar|chocolate|tv|netflix|cake|sweets|candy)\b"),
    ("for_me", "en", r"\b(?:took|takes|take|collects|picks up) my (?:\w+ ){1,6}?for me\b"),
    ("nearly_a_heart_attack", "en", r"\b(?:nearly|almost) (?:had|gave me) a heart attack\b|\bgave me a heart attack\b"
     r"|\b(?:nearly|almost) (?:fainted|passed out|died|had a stroke) (?:at|when|over|from)\b"),
    ("choking_on_prices", "en",
     r"\bchoking on (?:the |these |those |this |your |all )?(?:fees|prices|price|costs|bill|charges|dust)\b"
     r"|\bcant breathe in (?:this|these|that|those|the) (?:masks?|shirts?|jeans|dress|heat|tops?|jackets?|collar)\b"),
    ("about_suicide", "en", r"\bsuicide (?:prevention|awareness|hotline|helpline|squad)\b"
     r"|\b(?:documentary|film|movie|book|article|show|episode|podcast) (?:about|on) suicide\b"),
    ("had_it_before", "en",
     r"\b(?:had|used to have) (?:chest pains?|a stroke|a heart attack|a seizure|a fall)(?: \w+){0,3}? "
     r"(?:ago|last (?:year|month|week|time|winter|summer)|before|once|back then)\b"),
    ("kill_me_if", "en", r"\b(?:will|would|gonna|going to|is going to) kill me if\b|\bhit me with (?:a |his |her )?(?:pillow|ball|snowball|toy)\b"
     r"|\bstroke of (?:luck|genius)\b"),
    ("beats_me", "en", r"^beats me\b|\bit (?:really )?hit me\b|\bbeat me (?:at|in|to)\b"),
)

# Plain crisis utterances per category (what `mgi fuzz` says for `safety_reached`).
SAMPLES: dict[str, tuple[str, ...]] = {
    MEDICAL: ("가슴이 너무 아파서 숨을 못 쉬겠어요", "숨이 안 쉬어져요", "I can't breathe"),
    SELF_HARM: ("죽고 싶어요", "이제 살기 싫어요", "I want to die"),
    ABUSE: ("아들이 자꾸 때려요", "며느리한테 맞았어요", "my son hits me"),
}
