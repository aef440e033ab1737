"""Meaning classes of lemmas for the lemma tier of intent matching (`evidence`): data only.

In: nothing. Out: `CONCEPTS`, lemma -> class name ("=pay"), and `STOP_LEMMAS`, lemmas that
say nothing about which intent is meant (English function words; Kiwi's tags already drop
Korean particles and endings). A class joins the words people use for one thing in support
and companion conversations ("mastercard", "paypal", "card" all say how to pay), so that an
example written with one of them meets an utterance with another. Chosen from general usage
and the tuning sets (tests/data/tuning_*), never from the held-out sets.
"""

from __future__ import annotations

import re

_CLASSES = {
    # English: what a customer of a shop asks about
    "=pay": "pay payment card mastercard visa amex paypal klarna cash debit credit crypto "
            "bitcoin cheque installment installments applepay googlepay american "
            "express maestro venmo gpay",
    "=accept": "accept support allow take use",
    "=refund": "refund reimburse reimbursement return exchange",
    "=money": "money",
    "=forget": "forget forgot remember recall",
    "=order": "order purchase item stuff thing product package parcel shipment box",
    "=arrive": "arrive come reach show receive expect",
    "=late": "late overdue delay delayed wait waiting still yet lose lost missing",
    "=track": "track tracking status eta whereabouts transit dispatch",
    "=login": "login log sign signin password username credential credentials verification "
              "lock locked unlock hack hacked access recover account block blocked suspend "
              "suspended disable disabled freeze frozen logon otp 2fa",
    "=cancel": "cancel void undo scrap stop cancellation cancell",
    "=address": "address street zip postcode apartment destination office home house",
    "=other": "another other different new instead else",
    "=change": "change update edit modify fix correct redirect switch move",
    "=wrong": "wrong mistake incorrect error",
    "=human": "human person agent representative operator someone somebody staff manager "
              "people rep",
    "=talk": "talk speak chat call phone contact connect transfer",
    "=open": "open close closing opening hour hours",
    "=day": "monday tuesday wednesday thursday friday saturday sunday weekend weekends weekday "
            "holiday holidays christmas tonight tomorrow today",
    "=ship": "ship shipping delivery deliver postage courier",
    "=cost": "cost price fee fees charge much expensive cheap free rate rates dollar",
    "=broken": "broken damage damaged defective faulty",
    "=end": "end bye goodbye enough later",
    # Korean (Kiwi's lemmas): what a user asks of a booking, an e-mail, a conversation
    "=취소": "취소 관두 그만두",
    "=그만": "그만 이만 끝 끝내 종료 마치 마무리 여기",
    "=나중": "다음 나중",
    "=바꾸": "바꾸 고치 수정 변경 옮기 틀리 잘못",
    "=얘기": "얘기 이야기 대화 통화 말",
    "=끊": "끊",
    "=쉬": "쉬 자 피곤",
    "=바쁘": "바쁘",
    "=보내": "보내 전송 발송 재전송",
    "=메일": "메일 이메일 편지",
    "=쓰": "쓰 작성",
    "=수신": "수신자 수신인 받",
    "=발신": "발신자 발신인",
    "=다시": "다시 재시도 재",
    "=그대로": "그대로 원래 원래대로 두 놔두",
    "=첨부": "첨부 붙이 파일 문서 사진",
    "=서명": "명함 서명",
    "=톤": "톤 말투 분위기 어조",
    "=제목": "제목",
    "=내용": "내용 본문",
    "=예약": "예약 접수",
    "=돕": "돕 도움 도와",
    "=모르": "모르 이해",
    "=날짜": "날짜 날 요일",
}

# Korean word forms that open like a request verb and are praise, not a request ("끝내주는
# 날씨네", what great weather, is no "이제 끝내자"): intent matching reads them as no word.
PRAISE_WORDS_KO = re.compile(r"끝내주(?:는|게|네|더라|던데|잖아|더군)")

CONCEPTS: dict[str, str] = {word: name for name, words in _CLASSES.items()
                            for word in words.split()}

STOP_LEMMAS = frozenset((
    "i", "me", "my", "mine", "you", "your", "we", "our", "us", "it", "its", "they", "them",
    "the", "a", "an", "to", "of", "for", "on", "in", "at", "by", "with", "from", "and", "or",
    "be", "is", "are", "am", "was", "do", "does", "did", "can", "could", "would", "will",
    "shall", "should", "may", "might", "please", "just", "so", "this", "that", "there",
    "here", "some", "any", "have",
    "has", "had", "get", "got", "let", "like", "want", "need", "would", "im", "ive", "id",
    "its", "thats", "whats", "hi", "hello", "hey", "ok", "okay", "yes", "no", "again", "also",
    "now", "up", "out", "about", "if", "but", "than", "then", "very", "really",
    "too", "all", "one", "know", "tell", "give", "guy", "guys", "anymore", "s", "into", "onto",
    # hedges and vague words: they say how sure the speaker is, not what is asked
    "think", "guess", "seem", "believe", "maybe", "perhaps", "probably", "actually",
    "something", "anything", "these", "those",
))
