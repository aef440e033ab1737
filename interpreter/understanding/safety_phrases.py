"""More crisis expressions for the safety lexicon: data only, spliced into
`safety_lexicon.ENTRIES` (same form, same reading: `ko` patterns on the compact text, `en`
on the spaced one; see that module's docstring).

Kept apart so the lexicon module stays readable. Each entry here was written for a kind of
utterance in the tuning sets (`tests/data/tuning_safety_*.jsonl`, round 8) that no entry
read: self-injury in other words, following a dead parent or child, drowning, gas,
starving, farewells, "no way but death", typing slips, indirect English wishes.
"""

from __future__ import annotations

# The entry rules and categories, named here for both modules (`safety_lexicon` imports them).
NEGATABLE, HEDGED = "negatable", "hedged"
MEDICAL, SELF_HARM, ABUSE = "medical_emergency", "self_harm", "abuse"

_KIN = ("어머니|엄마|아버지|아빠|아들|딸|자식|남편|아내|영감|할멈|친구|부모님|어머님|아버님|"
        "마누라|손자|손녀|형|언니|오빠|누나|동생")
_GONE = "먼저간|먼저가신|죽은|돌아가신|세상떠난|세상을떠난|하늘에계신|하늘나라간|하늘나라에간|하늘나라에있는"
_ME = "나|저|날|절|나자신|내자신|저자신|제자신|스스로|내몸|제몸|자신|자기몸|자기"

MEDICAL_MORE: tuple[tuple[str, str, str, str, str], ...] = (
    ("swallowed_poison", MEDICAL, "ko",
     r"(?:락스|세제|표백제|부동액|살충제|소독약|세정제|제초제|쥐약|농약)(?:을|를|도)?"
     r"(?:실수로|잘못|모르고|몰래|조금|많이|한모금|한컵)*(?:마셨|먹었|삼켰|마셔서|먹어서|삼켜서)", NEGATABLE),
    ("black_stool", MEDICAL, "ko", r"(?:변|대변|똥)(?:이|을|색이)?(?:새까맣|까맣|시커멓|검게|검은색)", NEGATABLE),
    ("swelling_en", MEDICAL, "en",
     r"\bthroat is (?:swelling|closing)\b|\b(?:swelling|swollen) (?:throat|tongue)\b|\banaphyla", NEGATABLE),
)

SELF_HARM_MORE: tuple[tuple[str, str, str, str, str], ...] = (
    ("harm_myself", SELF_HARM, "ko",
     rf"(?:{_ME})(?:을|를)?(?:자꾸|그냥|막|일부러)?해치(?:고싶|고파|려고|고말|는생각|고싶은|ㄹ까)"
     r"|(?:칼|면도칼|커터칼|칼날|유리조각|가위)(?:로|을|를)[가-힣]{0,6}?(?:그었|긋고|그어버|그을|그으려)"
     r"|(?:손목|팔|허벅지|몸|손등)(?:에|을|를)?칼(?:을|로)?(?:댔|대고|대었|그었|그어)"
     r"|(?:담뱃불|라이터|불)로(?:내|제)?(?:팔|손|몸|다리|허벅지|손등)(?:을|를)?지(?:졌|지|져)"
     r"|일부러[가-힣]{0,8}?(?:박았|그었|찧었|다치게했|베었|찔렀)|자학"
     r"|(?:손목|팔|몸|허벅지|다리|손등)(?:에|을|를)?(?:자꾸|일부러|또)?상처(?:를|을)?(?:냈|내|낸)"
     r"|(?:스스로|내|제|나의)목(?:을)?(?:조르|졸라)|목(?:을)?조르고싶은충동", HEDGED),
    ("follow_the_dead_kin", SELF_HARM, "ko",
     rf"(?:{_GONE})(?:우리)?(?:{_KIN})(?:곁|옆|한테|에게|보러|따라|만나러|곁으로|옆으로)[가-힣]{{0,3}}?"
     r"(?:가고싶|가고파|가야|갈래|갈까|가려고|가면좋|가고만)", HEDGED),
    ("die_by_means", SELF_HARM, "ko",
     r"(?:강물|강|바다|물|한강|저수지|호수|강가|바닷물)(?:에|에다|속에|속으로|으로|로)?(?:몸을)?(?:던지|던져)(?:고싶|고파|버릴|버리고|려고|볼까|을까)"
     r"|(?:빠져|굶어|얼어|목매|목매달아|뛰어내려)(?:서)?죽(?:을래|을거|을게|을란다|어버릴|고싶|으려고|으련다)"
     r"|가스(?:밸브|불|를|밸브를)?(?:다|그냥)?(?:틀어|열어)(?:놓고|두고)(?:잘|자|잠들|죽|누워)"
     r"|(?:약|밥|치료|투석)(?:도|을|를)?(?:다|전부|모두|그냥)?끊고(?:그냥)?(?:갈래|가야지|가련다|죽|가고싶|갈란다)"
     r"|(?:줄|끈|밧줄|넥타이|전깃줄)(?:을|를)?(?:문고리|천장|방문|옷걸이|나무|베란다|샤워기)(?:에|에다)?(?:걸어|매|묶어|달아)"
     r"|(?:기찻길|철길|철로|선로|찻길|차도)(?:에|위에|로)?(?:누워|드러누워|뛰어들)(?:버릴|버리고|버려|고싶|볼까|있을)"
     r"|(?:차|운전|핸들|차를몰고|차몰고)[가-힣]{0,8}?(?:박아|들이받아|처박아)(?:버릴|버리고|버려)"
     r"|(?:난간|다리위|대교위|창틀)(?:에|위에)?(?:서있|올라와있|올라가있|올라섰|매달려있|앉아있)"
     r"|(?:안아프게|편하게|조용히|깨끗하게|확실하게)죽(?:는|을|으려면|고싶|을수)"
     r"|몇(?:알|개|통)(?:을|를)?(?:먹으면|삼키면|이면)죽|(?:어떻게|어디서)(?:하면|해야)?(?:죽을수|죽는지|죽나|뛰어내리면)"
     r"|목숨(?:을|도)?(?:그만|이제)?(?:내려놓|놓)(?:고싶|고파|을래|으려|아버리)"
     r"|약(?:을|를)?(?:다|전부|몽땅|한꺼번에)먹으면(?:편해|편하|끝|죽|잠들|영영)"
     r"|약(?:을|를)?(?:몰래|조금씩|잔뜩)?모아(?:서|가지고|놨다가|뒀다가)?(?:한번에|한꺼번에|다|몽땅)(?:먹|삼키|털어)"
     r"|유언(?:장)?(?:을|도)?(?:써놓고|써놨|써두고|쓰고)[가-힣]{0,6}?(?:약|번개탄|줄|농약|수면제|밧줄)", HEDGED),
    ("no_way_but_death", SELF_HARM, "ko",
     r"(?:죽는것|죽는거|죽음|죽는수|죽는길)(?:말고는|밖에|말곤|외에는|외엔)(?:방법|답|길|수)?(?:이|가|은|도)?(?:없|안보)"
     r"|(?:내가|제가|나|저)죽어야[가-힣]{0,8}?(?:끝나|끝날|해결|편해|편하)"
     r"|(?:폐만|짐만|폐를|짐이)(?:끼치|되)[가-힣]{0,6}?(?:빨리가야|가야지|없어져야|죽어야|사라져야|떠나야)"
     r"|(?:세상에|이세상에|어디에도)(?:내|제)자리(?:는|가|도)?없"
     r"|(?:해|해가|내일해)뜨는(?:거|것|걸)?(?:보고싶지않|보기싫|안봤으면)|(?:내일|아침)(?:이)?(?:안왔으면|오지않았으면|오지말았으면)"
     r"|(?:영원히|영영)쉬(?:고싶|고파|고만|었으면|면좋)|(?:그냥|이제)빨리가고(?:싶|파)"
     r"|살날(?:도|이)?(?:얼마)?(?:안|얼마안)남았[가-힣]{0,6}?(?:가고싶|빨리가|죽고|가야)"
     r"|살아있(?:고싶지|기싫|는게싫|기가싫|고싶은마음이없)|살아있는게(?:지옥|고통|괴롭|지겹|죄|형벌)"
     r"|숨(?:을)?쉬고싶지(?:가|도)?않|숨쉬기(?:도|조차)?싫|숨(?:쉬는것|쉬는게|쉬는거)(?:도|조차)?(?:지쳤|지겹|지겨|괴롭|싫)"
     r"|죽을(?:까말까|까생각|까해|까싶)|(?:나|난|저|전|나는|저는)(?:그냥|이제|확|콱|차라리|정말|진짜)*죽을(?:거야|거예요|거다|겁니다|래|게|란다)"
     r"|죽겠다(?:고|는)(?:문자|카톡|메시지|유서|편지)|죽어(?:삘|뿔|뿌릴)|(?:고마|그마|그냥|콱)가(?:뿌|삐)(?:고싶|고잡|고파|까|릴까)"
     r"|(?:이제|이젠)(?:정말|진짜|다)?끝이(?:야|다|에요|네)[가-힣]{0,8}?(?:미안|고마웠|안녕|잘있어|사랑해)"
     r"|(?:빨리|얼른|영영|어서)눈(?:을)?감(?:고싶|고파|았으면|으면좋)"
     r"|차라리(?:내가|제가|나|저)?(?:없어지는게|사라지는게|죽는게|없는게)(?:나|낫|편)"
     r"|(?:아무도모르게|영원히)(?:조용히)?(?:떠나|사라지|가)고(?:싶|파)"
     r"|죽음(?:에대해|에대한생각|생각)?(?:을|만|이)?(?:자꾸|계속|매일|늘|하루종일)+(?:생각|떠올|들)"
     r"|(?:이번주말|주말|오늘밤|이번주)(?:에)?(?:다|모든걸|모두|전부)끝낼(?:거|래|게)"
     r"|죽구(?:싶|파)|(?:장례식|장례|영정)[가-힣]{0,10}?(?:먼저갈|먼저간다|먼저가|떠날게|떠난다)"
     r"|(?:애들|아이들|자식들|우리애들|남은사람들|가족)(?:을|를)?(?:잘)?부탁(?:해|한다|해요|합니다)[가-힣]{0,6}?(?:먼저간다|먼저갈게|떠날게|떠난다)"
     r"|(?:내일|내일아침|오늘밤|내일이|내일아침이)(?:이면|에는|면)?(?:나는|난|저는|전)(?:여기|이세상에|세상에)?없을(?:거야|거예요|거다|겁니다)",
     HEDGED),
    ("more_en", SELF_HARM, "en",
     r"\bkilling myself\b|\b(?:thinking (?:about|of)|want to|going to|gonna|ready to|plan(?:ning)? to) (?:end|ending) (?:things|it|it all)\b"
     r"|\bbetter off (?:if i (?:was|were|am) |with me )?(?:gone|dead|not here|not around)\b"
     r"|\b(?:on|at) the (?:ledge|edge of the (?:roof|bridge|building|cliff))\b|\bon the bridge right now\b"
     r"|\bpills?\b(?: \w+){0,10} (?:take|swallow) them all\b"
     r"|\b(?:sleep|go to sleep|fall asleep) and (?:never|not) wake up\b"
     r"|\bno way out (?:but|except|other than) (?:dying|death|to die|killing myself)\b|\bsaying goodbye to everyone\b"
     r"|\b(?:everyone|everybody|they|my family|my kids|my children) (?:would|will) be (?:happier|better|better off|fine)"
     r" (?:if i (?:died|was gone|were gone|was dead)|without me|when im gone)\b|\bgoodbye for good\b"
     r"|\bsay(?:ing)? (?:my )?(?:final|last) goodbyes?\b"
     r"|\b(?:dont see|do not see|see no|cant see|cant find|dont have|have no) (?:a |any |the )?(?:point|reason)"
     r" (?:in |of |to )?(?:keep going|keeping going|living|going on|carry on|carrying on|live|be alive)\b",
     HEDGED),
)

_PEOPLE = ("아들|딸|며느리|사위|남편|아내|마누라|영감|할멈|손자|손녀|자식|자식들|자녀|큰아들|작은아들|"
           "큰딸|막내|형|오빠|언니|누나|동생|조카|보호사|요양보호사|간병인|도우미|직원|간호사|요양사|복지사")

ABUSE_MORE: tuple[tuple[str, str, str, str, str], ...] = (
    ("kept_apart", ABUSE, "ko",
     r"(?:전화|연락|외출|친구|사람|가족|자식|교회|성당|병원)(?:도|를|을|들|이랑|와|에)?(?:못|안)"
     r"(?:하게|만나게|보게|나가게|가게)(?:해|하|막|한|했)|(?:만나지|연락하지|나가지)못하게", NEGATABLE),
    ("withheld", ABUSE, "ko",
     rf"(?:{_PEOPLE})(?:이|가)[가-힣]{{0,4}}?(?:약|밥|물|식사|끼니)(?:을|를|도)?(?:안|못)(?:줘|주)"
     r"|기저귀(?:를|도)?[가-힣]{0,6}?(?:안|못)(?:갈아|갈)", NEGATABLE),
    ("home_threat", ABUSE, "ko",
     r"(?:요양원|요양병원|시설)(?:에|으로|에다)?(?:보내|쳐넣|집어넣|갖다버|처넣)(?:버린|버리겠|버릴|겠다)"
     r"[가-힣]{0,6}?(?:겁|협박|위협|다고|대)", NEGATABLE),
    ("touched", ABUSE, "ko",
     r"(?:몸|가슴|엉덩이|허벅지|속옷)(?:을|를)?(?:함부로|자꾸|몰래|억지로|이상하게)+(?:만져|만지|만졌)"
     r"|성추행|성폭행|추행", NEGATABLE),
)
