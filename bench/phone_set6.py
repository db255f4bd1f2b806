"""`held_out_6`: a sixth held-out part of the generated international phone set (issue 16).

Our own generated data, written for this project (nothing copied), BEFORE the `pii` stage's
round-6 phone rules, by someone who did not read the rules (stages/pii/) nor score the stage on
this part while writing it. It is never to be tuned on. The older parts (`tune` and `held_out`
in bench/phone_set.py, `held_out_2` to `held_out_5` in bench/phone_set2.py to phone_set5.py)
have been looked at and are tuning data now; figures are reported on this part. Once scored it
is read for figures only: `bench/pii_phones.py --show` is not to be used on it while tuning, and
neither is `--show` of this script (the default prints counts only).

Fresh against the older parts: a new seed, new draws, new sentence frames in 34 languages
(pharmacy pages, taxi ads, wedding venues, donation pages, library hours, sports clubs, car
repair shops, guesthouse reviews, waste collection notices, job boards, newsletter footers,
support ticket replies; numbers glued to CJK, Hangul, Thai, Arabic-script and Bengali-script
text, full-width punctuation), and new hard negatives of the kinds found next to contact details
(order, booking, ticket and case references, opening hours, prices, postal codes with towns,
street numbers, company, VAT and tax numbers, licence plates, dates in many locales, years,
counts with locale separators, customer and account numbers, product codes, versions,
measurements, coordinates), each in a frame with a phone word and in one without. The numbers
and their written forms come from held_out_3's helpers (imported, not copied; now in
bench/phone_parts.py), so the mix of forms and kinds is held_out_5's: libphonenumber's example
numbers of every supported region, digits redrawn until valid for the region and of the
example's type (mobile, fixed line, toll-free); half with a country code, half without, a tenth
of those in full-width digits.

    .venv/bin/python bench/phone_set6.py
    .venv/bin/python bench/pii_phones.py --part held_out_6
"""

from __future__ import annotations

import sys

import phone_parts
from phone_parts import generate

PART = "held_out_6"
SEED = "gristmill phone set, part 6 (round-6 held-out), written before the round-6 rules"
# lang: (frames with a phone word, frames without). `{}` is the number; no digits in frames.
FRAMES = {
    "en": (["Repeat prescriptions: allow two working days, or phone the dispensary on {} to check.",
            "Re: [Ticket] Refund not received\nHi Sam, sorry for the wait. If it is urgent, call "
            "our support line on {}.",
            "You are receiving this newsletter because you signed up on our site. Unsubscribe · "
            "Phone {}"],
           ["★★★★★ Spotless rooms and the best breakfast in the valley. Book with Margaret, {}",
            "Airport transfers at fixed fares · child seats on request · Dave {}"]),
    "de": (["Abfuhrtermine: Die Gelbe Tonne wird diese Woche am Freitag geleert. Rückfragen "
            "beim Entsorgungsbetrieb, Tel. {}",
            "Kfz-Meisterbetrieb Huber · Inspektion, Reifenwechsel, HU/AU · Termine telefonisch {}"],
           ["Hochzeitslocation Gut Lindenhof – Scheune, Garten, Gästezimmer – Familie Brandt {}",
            "Stellenbörse › Pflegefachkraft (m/w/d), Teilzeit › Ansprechpartnerin Frau Yilmaz {}"]),
    "fr": (["Pharmacie de garde ce week-end : renseignements par téléphone au {}.",
            "Club de handball — inscriptions pour la saison — secrétariat joignable au tél. {}"],
           ["Domaine des Saules, salle de réception pour mariages et baptêmes — {}",
            "Collecte des encombrants : sortez-les la veille au soir. Service propreté, {}"]),
    "es": (["Farmacia Central · guardia nocturna esta semana · teléfono {}",
            "Taller Hermanos Ruiz: aceite, frenos y pre-ITV. Pida cita al teléfono {}."],
           ["Dona ahora y ayuda a las familias afectadas por las inundaciones. "
            "Fundación Horizonte Solidario, {}",
            "Biblioteca municipal: en verano abrimos solo por las mañanas. {}"]),
    "pt": (["Precisa de táxi? Ligue para o telefone {}, atendemos aeroporto e rodoviária.",
            "Resposta ao chamado: Olá, Ana! Sua troca foi aprovada. Dúvidas pelo telefone {}."],
           ["Oficina do Zé — alinhamento, balanceamento e troca de pneus — {}",
            "Pousada aconchegante, café da manhã caprichado, voltaremos! Reservas: Dona Célia {}"]),
    "it": (["Biblioteca comunale: orario estivo ridotto; per rinnovare i prestiti telefonare al {}",
            "Raccolta differenziata: il ritiro dell'umido passa al mercoledì. Numero verde {}"],
           ["Villa Fiorita, location per matrimoni sul lago, sala per duecento ospiti · {}",
            "ASD Pallavolo Riviera — iscrizioni aperte per il minivolley — {}"]),
    "ru": (["Аптека «Здоровье»: заказ лекарств по телефону {}, доставка в день заказа.",
            "Ответ службы поддержки: заявка зарегистрирована. Горячая линия: тел.{}"],
           ["Автосервис на Садовой — ремонт ходовой, шиномонтаж, замена масла — Сергей {}",
            "Вывоз мусора во дворе переносится на пятницу. Управляющая компания «Уют», {}"]),
    "be": (["Бібліятэка працуе з аўторка па суботу; даведкі па тэлефоне {}",
            "Таксі «Хуткае»: замова па тэл. {} кругласутачна"],
           ["Аўтамайстэрня каля рынку — рамонт тармазоў і падвескі — Алесь {}",
            "Сядзіба для вяселляў над возерам, банкетная зала і пакоі для гасцей — {}"]),
    "ky": (["Дарыкана түнү бою иштейт, дары заказ кылуу үчүн телефон: {}",
            "Такси чакыруу: тел. {}, аэропортко арзан баада"],
           ["Футбол клубу балдарды машыгууга кабыл алат, машыктыруучу Азамат {}",
            "Той үчүн ресторан, кенен зал, жандуу музыка — {}"]),
    "tg": (["Дорухона: доруҳоро бо телефони {} фармоиш диҳед.", "Хизматрасонии мизоҷон: тел. {}"],
           ["Таъмири мошин, иваз кардани равған ва чархҳо — устод Фарҳод {}",
            "Тӯйхонаи «Гулистон», толор барои меҳмонон — {}"]),
    "zh": (["【药房】处方药预订请拨打电话{}，当天可取。",
            "工单回复：您好，退款已处理完毕，如有疑问请致电客服热线{}。",
            "社区通知：本周垃圾清运时间调整，详情咨询物业电话：{}"],
           ["婚宴场地｜草坪婚礼｜可容纳宾客数十桌｜联系人陈小姐{}",
            "汽车维修保养·轮胎更换·钣金喷漆　张师傅（{}）"]),
    "ja": (["【薬局】処方せんの事前受付は電話{}で承ります。",
            "サポート窓口より：お問い合わせありがとうございます。お急ぎの場合はお電話（{}）ください。",
            "図書館の開館時間が変わります。お問い合わせ　℡{}"],
           ["結婚式場・ガーデンチャペル　ブライダルサロン（{}）",
            "【求人】整備士募集｜正社員｜担当：高橋{}"]),
    "ko": (["약국 야간 운영 안내 · 처방전 접수 문의 전화{}",
            "[답변] 고객님, 환불 처리가 완료되었습니다. 추가 문의는 고객센터 전화 {}로 주세요."],
           ["웨딩홀 상담 예약 · 스몰웨딩 가능 · 이실장{}",
            "축구 동호회 회원 모집! 주말 오전 운동, 총무 최민수 {}"]),
    "th": (["ร้านขายยาเปิดทุกวัน สั่งยาทางโทรศัพท์{}",
            "แจ้งเลื่อนวันเก็บขยะในหมู่บ้าน สอบถามเทศบาล โทร.{}"],
           ["รถแท็กซี่ไปสนามบิน ราคาเหมา คุณสมชาย{}",
            "อู่ซ่อมรถช่างเอก เปลี่ยนยาง ถ่ายน้ำมันเครื่อง|{}"]),
    "ar": (["صيدلية الشفاء مفتوحة طوال الليل، للطلب اتصل على الهاتف{}",
            "رد على التذكرة: تم استلام طلبك وسنتواصل معك قريبًا. هاتف الدعم: {}"],
           ["قاعة أفراح الياسمينة، تتسع لعدد كبير من الضيوف — {}",
            "تبرّع الآن لدعم الأسر المحتاجة – جمعية الخير – {}"]),
    "hi": (["दवा की होम डिलीवरी के लिए फ़ोन नंबर{}",
            "नगर पालिका सूचना: कचरा गाड़ी का समय बदला है, शिकायत हेतु दूरभाष {}"],
           ["शादी के लिए बैंक्वेट हॉल, लॉन और पार्किंग — गुप्ता जी{}",
            "ऑटो गैराज: सर्विसिंग और डेंटिंग-पेंटिंग — {}"]),
    "ps": (["درملتون د شپې هم خلاص دی، د ټیلیفون شمېره {}", "د ښار ټکسي: ټیلیفون وکړئ {}"],
           ["د واده تالار، لوی انګړ او پارکینګ — {}", "د موټرو ترمیمځای — استاد نبي {}"]),
    "sd": (["دوائن جو دڪان، فون ڪريو: {}", "ٽيڪسي سروس، فون نمبر{}"],
           ["شادي هال، وڏو باغ ۽ پارڪنگ — {}", "گاڏين جي مرمت جو ڪارخانو — استاد اڪرم {}"]),
    "ku": (["Dermanxane her roj vekirî ye, ji bo siparîşê telefon bikin: {}",
            "Taksî ji bo balafirgehê — tel. {}"],
           ["Salona dawetê ya mezin, bi baxçe û parkê — {}",
            "Tamîrxaneya otomobîlan, guherandina rûn — Hoste Cemal {}"]),
    "or": (["ଔଷଧ ଦୋକାନ, ଘରକୁ ଡେଲିଭରି ପାଇଁ ଫୋନ୍ କରନ୍ତୁ {}", "ପାଠାଗାର ସମୟ ଜାଣିବା ପାଇଁ ଫୋନ୍ ନମ୍ବର{}"],
           ["ବିବାହ ମଣ୍ଡପ ଭଡ଼ା ଦିଆଯିବ — {}", "ମଟର ଗ୍ୟାରେଜ, ସର୍ଭିସିଂ — {}"]),
    "as": (["ঔষধৰ দোকান, ঘৰলৈ ঔষধ পঠোৱা হয়, ফোন কৰক {}", "বিবাহ ভৱন বুকিঙৰ বাবে ফোন নম্বৰ{}"],
           ["গাড়ী মেৰামতিৰ গেৰেজ — {}", "পুথিভঁৰাল দেওবাৰে বন্ধ থাকে — {}"]),
    "ig": (["Kpọọ anyị na ekwentị {} maka ọgwụ", "Tagzi gaa ọdụ ụgbọelu: ekwentị {}"],
           ["Ụlọ oriri maka agbamakwụkwọ — {}", "Onye na-arụzi ụgbọala, Nna anyị Emeka {}"]),
    "so": (["Farmashiyaha wuu furan yahay habeen iyo maalin, wac telefoonka {}",
            "Taksi magaalada gudaheeda — tel. {}"],
           ["Hoolka arooska, meel ballaaran oo baarkin leh — {}",
            "Deeq u dir qoysaska tabaalaysan — Hay'adda Samafal — {}"]),
    "om": (["Mana qorichaa: ajajaaf bilbila {} irratti nu quunnamaa",
            "Taaksii buufata xiyyaaraa — bilbila {}"],
           ["Galma cidhaa bal'aa — {}", "Garaajii konkolaataa, Obbo Tolaa {}"]),
    "rw": (["Farumasi ifunguye buri munsi, hamagara kuri telefone {}",
            "Tagisi ijya ku kibuga cy'indege: telefone {}"],
           ["Inzu y'ubukwe nini ifite parikingi — {}", "Garage yo gukora imodoka, Bwana Jean {}"]),
    "mg": (["Fivarotam-panafody misokatra isan'andro, antsoy amin'ny finday {}",
            "Taxi mankany amin'ny seranam-piaramanidina: tel. {}"],
           ["Efitrano lehibe ho an'ny fampakaram-bady — {}",
            "Garazy fanamboarana fiara, Ramanana {}"]),
    "ht": (["Famasi a louvri chak jou, rele nou nan telefòn {}",
            "Taksi pou ayewopò a — telefòn {}"],
           ["Sal resepsyon pou maryaj, gwo lakou ak pakin — {}",
            "Bay yon don pou timoun lekòl yo — Fondasyon Lespwa — {}"]),
    "qu": (["Hampi wasi: telefonowan waqyawayku {}", "Taksi aeropuertokama, telefono {}"],
           ["Kasarakuy wasi, hatun pampayuq — {}", "Awto allichiq, Mayta Yupanqui {}"]),
    "gn": (["Pohãnohenda: ehenói ñandéve pumbyrýpe {}", "Taxi aeropuértope — pumbyry {}"],
           ["Ñemenda róga, korapy tuicha — {}", "Mbo'ehára Ramón, fútbol aty {}"]),
    "eo": (["Apoteko malfermita ĉiutage; mendoj per telefono {}",
            "Respondo al via bileto: ni riparis la eraron. Demandoj? Telefonu al {}"],
           ["Geedziĝa salono kun ĝardeno kaj parkejo — {}",
            "Aŭtoriparejo Verda Stelo, s-ro Petro {}"]),
    "lb": (["Apdikt Uewerstad: Bestellungen och iwwer Telefon {}",
            "Offallkalenner: d'Bio-Dreckskëscht gëtt e Freideg eidel gemaach. Infoen um Tel. {}"],
           ["Fussballclub sicht nei Spiller fir d'Jugend — Trainer Marc {}",
            "Bibliothéik vun der Gemeng: Ausleihen och samschdes — {}"]),
    "mt": (["Spiżerija miftuħa kuljum; ordnijiet bit-telefon {}",
            "Taxi lejn l-ajruport — ċempel {}"],
           ["Sala għat-tiġijiet b'ġnien kbir u parkeġġ — {}",
            "Garaxx tal-karozzi, bdil taż-żejt — Ġużeppi {}"]),
    "fo": (["Apotekið er ope gerandisdagar; bílegg heilivág á telefon {}",
            "Taxi til flogvøllin — ring {}"],
           ["Gistingarhús við havið, góður morgunmatur — Sigrid {}",
            "Ítróttarfelagið tekur ímóti nýggjum limum — {}"]),
    "gl": (["Farmacia de garda esta fin de semana: teléfono {}",
            "Obradoiro mecánico Os Piñeiros, pide cita no teléfono {}"],
           ["Biblioteca municipal: horario de verán só polas mañás — {}",
            "Pazo para vodas con xardín e capela — {}"]),
}  # fmt: skip
# Not phones (nor any other personal data: no IP addresses, IBANs or Luhn-valid card numbers).
NOT_PHONES = [
    # order, booking, ticket and case references
    "Ticket #INC0048213", "Case 07731942", "Ref. BK-2025-118406", "Booking no. 4471 0923 58",
    "Auftragsnummer 2025-04471", "Commande n° 7731 2209 4", "Pedido nº 558 412 907",
    "工单号 GD20250611004", "予約番号 A7-3318-2045", "접수번호 2025-0611-7734",
    "คำสั่งซื้อ 250611QX8841", "رقم الطلب 7733104", "Номер заявки 48-117-2093",
    "RMA 3390-1174-22", "Confirmation 88213-4470",
    # opening hours and time ranges
    "Mo–Sa 8:30–19:00", "Lun.-Ven. 9h-12h / 14h-18h", "周一至周五 9:00-17:30", "平日 10:00〜19:00",
    "월~금 09:30~18:30", "เปิด 08.00-20.00 น.", "السبت - الخميس ٩:٠٠ - ١٧:٠٠", "सोम–शनि 10:00–18:00",
    "Пн–Пт 08:00–20:00", "Tue & Thu 14:00–19:30", "open 7:00am–10:30pm", "Öffnungszeiten 10–18 Uhr",
    "08:00 – 12:00 | 13:30 – 17:00",
    # prices
    "CHF 1'149.–", "£2,499.99", "€ 389,00 inkl. MwSt.", "¥36,800（税込）", "₩89,000",
    "zł 4 299,00", "₸ 245 000", "AED 3,750", "Rs. 18,499/-", "₽ 15 990",
    "US$ 14.99/mo",
    # postal codes with towns
    "75011 Paris", "D-04109 Leipzig", "28013 Madrid",
    "FO-100 Tórshavn", "VLT 1117 Valletta", "15705 Santiago de Compostela", "220030 Минск",
    "720001 Бишкек", "〒150-0043 東京都渋谷区", "上海市 200031", "서울 03187",
    "เชียงใหม่ 50200", "400001 Mumbai",
    # street numbers
    "Hauptstraße 112a", "Calle Mayor, 47, 3º izq.", "ul. Piękna 24/6", "Via Garibaldi 15/3",
    "пр. Независимости, д. 65, кв. 118", "12 rue de la Paix, bât. B", "Triq il-Merkanti 54",
    "4417 Oakridge Drive, Unit 210", "Rua Augusta 1440, apto 32", "No. 88, Lane 123, Sec. 4",
    # company registration, VAT and tax numbers
    "USt-IdNr. DE 298 117 604", "SIREN 823 119 561", "CIF B-84726153", "P.IVA 04821730962",
    "KvK 68213940", "BTW NL8547.21.903.B01", "ABN 71 442 903 186",
    "GSTIN 29ABCPK4417R1Z3", "УНП 192 847 301", "ИНН 7704 218 936", "사업자등록번호 214-86-39127",
    "统一社会信用代码 91310115MA1K4C2X8P", "UID CHE-114.582.963 MWST",
    "Company No. 11482093",
    # licence plates
    "B-MK 4471", "KA 05 MN 2231", "粤B·D72K19", "品川 330 さ 12-34", "12가 3456",
    "กข 4471 กรุงเทพมหานคร",
    "А 123 ВС 77", "ZH 481 223",
    # dates in many locales, years
    "11 juin 2025", "11/06/2025", "2025年6月11日(水)", "2025년 6월 11일",
    "11 มิถุนายน 2568", "١١ يونيو ٢٠٢٥", "११ जून २०२५", "11 июня 2025 г.", "11-VI-2025",
    "Wed, 11 Jun 2025 14:32:07 +0200", "2025/06/11 09:41", "11 чэрвеня 2025",
    "11 ta' Ġunju 2025", "11 de xuño de 2025", "11. juni 2025",
    "est. 1987", "© 2003–2025", "1999年創業", "FY2025/26",
    # counts with locale thousand separators
    "1,482,907 visitors", "3 418 226 hab.", "12.847.110 Besucher", "1'028'443 Einwohner",
    "2,45,18,903 रुपये", "٣٬٤١٨٬٢٢٦ نسمة", "9 840 117 человек",
    "17.382.905 habitantes", "5 602 413 mieszkańców", "raised 2,318,400 of 3,000,000",
    # customer and account numbers
    "Customer No. 4471-2093-88", "Kundennr. 10 4471 9920", "Client n° 00 8823 4417",
    "Member ID 77 4021 8832", "Vertragsnummer 3301 7744 20", "会员号 8802 3371 54",
    "Library card 21187 00449 2218", "Abonnent 77-4412-09",
    "Zählernummer 1ESY 1160 4471 22",
    # product codes
    "SKU 4471-BLK-42", "Art.-Nr. 812.447.20", "Item 30-2291-44", "品番 KX-7731-W",
    "MPN 9T-2211-08", "REF 61.44.118", "Cat. No. 3320-0114",
    "Tyre 205/55 R16 91V",
    # versions
    "v7.3.19", "Release 2025.06.1", "Android 15 (AP3A.241105.008)", "Firefox 126.0.1",
    "Node.js 20.14.0", "macOS 14.5 (23F79)", "Build 19045.4529",
    "OpenSSL 3.0.13",
    # measurements
    "2 400 mm", "45 × 60 × 180 cm", "3,5 t", "1 250 m²", "100–127 V", "18 650 kWh/a",
    "42,195 km", "Öl 5W-30, 4,5 l",
    # coordinates
    "40.4168° N, 3.7038° W", "35°41′22″N 139°41′30″E", "N 47° 22.617' E 008° 32.504'",
    "-41.2865, 174.7762", "53.9006, 27.5590", "UTM 33U 389412 5819374",
    "lat=59.3293&lon=18.0686", "39,9042 N / 116,4074 E",
]  # fmt: skip


def make() -> list[tuple[str, list[tuple[int, int, str]], dict]]:
    """Every sentence of the part (phone_parts.generate)."""
    return generate(SEED, FRAMES, NOT_PHONES)


def main(argv: list[str] | None = None) -> int:
    return phone_parts.main(argv, PART, make, __doc__)


if __name__ == "__main__":
    sys.exit(main())
