"""PII next to text of every script: Chinese, Japanese, Korean, Thai, Arabic, Devanagari and
Cyrillic, each type, glued to the text, with spaces, with full-width punctuation, in brackets,
and with full-width digits. Our own generated data (made-up values in frames written for this
project). Used by tests/stages/pii/test_scripts.py and bench/evals/pii_eval.py.

Two parts, written together before the script-aware rules were: `TUNE` (the rules were developed
against it) and `HELD_OUT` (other frames, other values; never tuned on; figures are reported on
it only). Each case is (script, type, layout, marked text) with the value written
`⟦type|value⟧` (tests/stages/pii/cases.py parses it).
"""

from __future__ import annotations

# (before, after) words around the value, per script
TUNE_FRAMES = {
    "zh": ("请联系", "谢谢"),
    "ja": ("ご連絡は", "までお願いします"),
    "ko": ("연락처", "입니다"),
    "th": ("ติดต่อ", "ครับ"),
    "ar": ("راسلنا", "شكرا"),
    "hi": ("संपर्क", "धन्यवाद"),
    "ru": ("Пишите", "спасибо"),
}
HELD_OUT_FRAMES = {
    "zh": ("我的信息是", "请保密"),
    "ja": ("お客様の情報", "を確認しました"),
    "ko": ("고객 정보", "확인했습니다"),
    "th": ("ข้อมูลของฉันคือ", "ขอบคุณ"),
    "ar": ("معلوماتي", "من فضلك"),
    "hi": ("मेरी जानकारी", "कृपया"),
    "ru": ("Мои данные", "пожалуйста"),
}
TUNE_VALUES = {
    "email": ["takahashi.mai@mail-example.co.jp", "wang.wei@corp.cn"],
    "phone": ["+44 20 7946 0478", "+81 3-1234-5678"],
    "credit_card": ["4958 0829 9511 7233", "5555-5555-5555-4444"],
    "iban": ["DE89370400440532013000"],
    "ip": ["81.2.69.160", "2a00:1450:4001:82b::200e"],
    "national_id": ["536-22-1234"],
}
HELD_OUT_VALUES = {
    "email": ["kim.minsu_90@mailbox-corp.kr", "ivan.petrov@pochta.ru"],
    "phone": ["+49 30 901820", "+7 495 123-45-67", "+91 98765 43210"],
    "credit_card": ["378282246310005", "6011 0009 9013 9424"],
    "iban": ["GB82 WEST 1234 5698 7654 32", "FR1420041010050500013M02606"],
    "ip": ["185.199.108.153", "2001:41d0:8:e8ad::1"],
    "national_id": ["078-05-1121", "RSSMRA85T10A562S"],
}
# How the value sits in the text: {b} and {a} are the frame's words, {v} the marked value.
LAYOUTS = {
    "glued": "{b}{v}{a}。",
    "spaces": "{b} {v} {a}.",
    "fullwidth": "{b}：{v}。{a}！",
    "brackets": "{b}（{v}）{a}、",
}
FULL_DIGITS = str.maketrans("0123456789+-", "０１２３４５６７８９＋－")


def build(frames: dict, values: dict) -> list[tuple[str, str, str, str]]:
    cases = []
    for script, (b, a) in frames.items():
        for t, vals in values.items():
            for i, (layout, form) in enumerate(LAYOUTS.items()):
                v = vals[i % len(vals)]
                cases.append((script, t, layout, form.format(b=b, a=a, v=f"⟦{t}|{v}⟧")))
            if t in ("phone", "credit_card"):  # the number written in full-width digits
                v = vals[0].translate(FULL_DIGITS)
                cases.append((script, t, "fullwidth_digits", f"{b}：⟦{t}|{v}⟧。{a}"))
    return cases


TUNE = build(TUNE_FRAMES, TUNE_VALUES)
HELD_OUT = build(HELD_OUT_FRAMES, HELD_OUT_VALUES)
# No PII at all: each must come back unchanged (numbers that are not PII, code, prose).
NOT_PII = [
    "2024年5月17日に10.0.19041.1288へ更新しました。",
    "订单号112-4456789-1234567已发货，价格1 299,00元。",
    "버전 v2.14.3.1, 날짜 2024-05-17, 페이지 1234567",
    "ราคา 1,299.00 บาท วันที่ 17.05.2024",
    "رقم الطلب 4500012345 بتاريخ 2024-05-17",
    "संस्करण 3.11.4 दिनांक 17/05/2024 ISBN 978-3-16-148410-0",
    "Заказ № 20231147 от 17.05.2024, версия 6.1.0-18",
    "std::vector<int>と@decoratorと user@localhost の例。",
    "メールは me@example.com（例）です。",
]
