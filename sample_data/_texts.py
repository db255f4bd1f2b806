"""Sentence banks and templates for the gristmill sample corpus.

Every sentence here was written for this project and is released with it under Apache-2.0.
``make_sample.py`` combines them with a seeded RNG; nothing is downloaded or copied.

Each language has a word block (``XX_WORDS``: ``key: a | b | c`` lines giving the values of
the slots, plus month names) and one topic bank per topic (``XX_TOPIC``): a line starting with
``T: `` is a title, every other non-empty line is one sentence. Placeholders in braces are
filled per document from the slots (``{n}`` and ``{date}`` are generated). All names, towns,
streets, shops, e-mail domains and phone numbers are invented.
"""


def _bank(block: str) -> dict[str, list[str]]:
    titles: list[str] = []
    sentences: list[str] = []
    for raw in block.strip().splitlines():
        line = raw.strip()
        if line.startswith("T: "):
            titles.append(line[3:])
        elif line:
            sentences.append(line)
    return {"titles": titles, "sentences": sentences}


def _words(block: str) -> dict[str, list[str]]:
    """``key: a | b | c`` lines; a key may repeat to continue its list on the next line."""
    words: dict[str, list[str]] = {}
    for line in block.strip().splitlines():
        key, _, values = line.partition(":")
        words.setdefault(key.strip(), []).extend(v.strip() for v in values.split("|"))
    return words


LANGS = ["en", "de", "fr", "es", "ru", "zh", "ja"]

# --------------------------------------------------------------------------------------------
# English
# --------------------------------------------------------------------------------------------

EN_WORDS = """
town: Millbrook | Ashford Green | Little Harwick | Brackenbury | Oakfield Cross | Westmere
town: Pennywell | Thornby Vale
name: Ellen Whitford | Nadia Brooks | Priya Lal | Ruth Ellison | Hannah Cole | Maggie Dunn
street: Mill Lane | Church Street | Station Road | Orchard Way | River Walk | Elm Terrace
day: Monday | Tuesday | Wednesday | Thursday | Friday | Saturday | Sunday
city: Lisbon | Edinburgh | Kyoto | Vienna | Porto | Krakow | Seville | Bergen
veg: tomatoes | courgettes | runner beans | carrots | leeks | potatoes | pumpkins | broad beans
dish: lentil soup | apple crumble | vegetable curry | potato gratin | banana bread
dish: mushroom risotto | fish pie | leek and potato soup
month: January | February | March | April | May | June | July | August | September | October
month: November | December
"""

EN_COOKING = """
T: A simple {dish} for busy weeknights
T: What I learned cooking {dish} every {day}
T: Kitchen notes: getting {dish} right
Most people think {dish} takes hours, but a relaxed version fits into a normal evening.
Start by chopping an onion and letting it soften slowly in a little olive oil.
My neighbour {name} taught me to season in small steps and to taste after every addition.
If you cook for a family, double the quantities and freeze half for a busy week.
A heavy pan keeps the heat even, so nothing catches on the bottom while you do other jobs.
Fresh herbs go in at the very end, because their flavour fades quickly in a hot pot.
Leftovers keep for two days in the fridge if you store them in a closed container.
The market on {street} sells good vegetables on {day} mornings, and the prices are fair.
Children enjoy helping with simple jobs such as washing vegetables or stirring the sauce.
A squeeze of lemon just before serving brightens almost any dish that tastes a little flat.
Serve it with crusty bread or a plain green salad, and nobody will ask for anything else.
Write down what you changed each time, so the next attempt is better than the last.
Cooking at home also saves a surprising amount of money over a month.
Let the dish rest for {n} minutes before serving so the flavours can settle.
Do not worry if the first attempt looks messy; the taste matters far more than the shape.
"""

EN_GARDENING = """
T: Spring tips for a small vegetable patch
T: Our allotment in {town}
T: What to do in the garden this month
As soon as the soil dries out a little in spring, you can start sowing.
This year our beds are mostly full of {veg}, because they need very little attention.
A thin layer of mulch keeps moisture in the ground and holds back the weeds.
Water early in the morning, when less of it is lost to evaporation.
My neighbour {name} collects rainwater in a large barrel behind her shed.
The compost heap at the back of the garden gives us rich, crumbly soil every year.
Even a balcony is enough to grow a few herbs in pots.
Bees and butterflies love a corner that has been left to wild flowers.
After about {n} days the first seedlings push through the surface.
In autumn we clear the beds and cover them with a blanket of fallen leaves.
Keeping a garden diary stops you from repeating last year's mistakes.
A ring of crushed eggshells around young plants seems to slow the slugs down.
Raised beds warm up faster in spring and are much kinder to your back.
Swap seeds with friends and you will always have something new to try.
Do not be discouraged by a poor harvest, because every season teaches you something.
"""

EN_BICYCLES = """
T: Getting your bike ready for the season
T: Cycling to work: one year on
T: Simple bike repairs you can do yourself
Before the first ride of spring, take a careful look at the brakes and tyres.
Check the tyre pressure regularly, because soft tyres make every ride feel like hard work.
A clean, well-oiled chain runs more quietly and lasts much longer.
Since I started cycling to work, the journey takes barely longer than the bus.
My colleague {name} rides {n} kilometres every day, whatever the weather.
A patch kit and a small pump should always live in your saddle bag.
Since last year {town} has had a new cycle path along the river.
Bright lights at the front and back are essential in the dark months.
If you are unsure, the bike workshop on {street} is happy to give advice.
A good lock is expensive, but it is still cheaper than a new bicycle.
After a wet ride, wipe the frame down and dry the chain with an old towel.
For long distances a comfortable saddle matters more than a light frame.
Fixing a puncture at the roadside takes ten minutes and saves a long walk home.
Mudguards may not look elegant, but they keep your trousers clean on rainy mornings.
"""

EN_TRAVEL = """
T: A weekend in {city}
T: Travel diary: by train to {city}
T: Tips for a first visit to {city}
We took the night train to {city} and arrived rested in the morning.
The old town is best explored on foot, since many of the lanes are closed to cars.
Our small hotel was quiet, yet only a few minutes' walk from the station.
On the first evening we ate at a little restaurant recommended by a local shopkeeper.
Museums tend to be far less crowded in the morning than in the afternoon.
A day ticket for the buses and trams pays for itself after three journeys.
My friend {name} had made a list of places away from the famous sights.
Leave yourself some spare time for the journey home in case a train is late.
After {n} days we felt as if we were starting to know the city a little.
A few words in the local language open doors and usually earn you a smile.
Travelling light makes trains and buses much more pleasant.
If you get up early, you have the streets to yourself before the tour groups arrive.
Carry a refillable water bottle, because most squares have a public fountain.
The best meal of the trip was a simple bowl of soup in the covered market hall.
"""

EN_NEWS = """
T: News from {town}
T: {town} council approves new plans
T: Around {town} this week
On {date} the {town} town council discussed repairs to the old stone bridge.
Work is expected to start in the spring and to last about {n} months.
Councillor {name} promised that residents would be kept informed from the start.
The weekly market will now also be held on {day}s in the square.
The library is extending its opening hours and now offers computer classes for older residents.
A new playground next to the park should be finished before the summer holidays.
Volunteers collected more than {n} bags of litter along the riverbank last weekend.
The bus route to the hospital will change from next month, with new stops on {street}.
Local shops reported a busy season, helped by visitors to the summer fair.
Residents on {street} have asked for a lower speed limit outside the primary school.
The swimming pool reopens after a long refurbishment with a new learner pool.
Tickets for the autumn concert in the town hall are available from the library desk.
The football club needs volunteers to help with the junior teams on {day} mornings.
A meeting about the plans is open to everyone and will take place in the community centre.
"""

EN_HISTORY = """
T: A short history of {town}
T: How the mill shaped {town}
T: {town} through the centuries
{town} probably began in the twelfth century as a handful of houses beside a ford.
For centuries the water mill on the river was the largest employer in the parish.
The market charter, granted in 1342, brought traders from the surrounding villages.
A great fire in 1688 destroyed most of the timber houses around the square.
The church was rebuilt in stone after the fire, and its tower still dominates the skyline.
When the railway arrived in 1871, the population doubled within a generation.
The old brewery on {street} closed in the 1950s and is now a row of flats.
Local historian {name} has spent years collecting letters and photographs from old families.
Many of the names on the war memorial belong to families who still live in the town.
The canal was once busy with narrow boats carrying coal and grain.
In the twentieth century the mill was converted into a small museum.
Street names such as Tanners Row and Ropewalk remind us of long-vanished trades.
Every summer a pageant retells the story of how the town was founded.
The museum on {street} is open on {day}s, and entry is free for everyone.
"""

EN_SOFTWARE = """
T: Getting started with the command line
T: A gentle introduction to version control
T: How to back up your files properly
In this tutorial we set up a small project from scratch and keep it under version control.
Open a terminal, create a new folder for the project and move into it.
The first commit should contain only a short readme file, so that the history starts clean.
Each change should do one thing, and its message should explain why it was made.
If something goes wrong, you can always return to an earlier commit without losing work.
Keep your backups on a second disk and check now and then that they can really be restored.
A configuration file in plain text is easier to review than settings hidden in a menu.
Run the tests before every commit; it takes a minute and saves hours of searching later.
Write error messages for the person who will read them at two in the morning.
My colleague {name} keeps a small notebook of commands she uses only once a year.
Automating a task only pays off if you repeat it more than a few times.
Do not store passwords in the repository; use environment variables or a secrets manager.
When a program is slow, measure first, because the real bottleneck is rarely where you expect.
After {n} minutes of practice the basic commands start to feel natural.
"""

EN_WEATHER = """
T: Weekend weather
T: Forecast for {town} and the surrounding area
T: Storms, rain and sunshine: the month in review
This weekend starts bright in {town}, but cloud will build from the west later on.
Temperatures will climb to around {n} degrees in the afternoon.
Frost is possible overnight, so cover any tender plants before you go to bed.
The wind will be moderate from the west, with strong gusts at times.
From {day} an area of low pressure brings heavy rain and a few thunderstorms.
Drivers should expect fog and slippery roads early in the morning.
Last month was noticeably warmer and drier than the long-term average.
For farmers, the rain has arrived at exactly the right moment.
Sunday should see more sunshine and stay largely dry.
If you are planning a walk in the hills, pack a waterproof jacket anyway.
The weather station at the town hall recorded a new high on {date}.
By the middle of the week it will feel distinctly cooler.
The river level is being watched closely after three days of steady rain.
Gardeners will welcome the mild nights, which are ideal for sowing.
"""

# --------------------------------------------------------------------------------------------
# German
# --------------------------------------------------------------------------------------------

DE_WORDS = """
town: Lindenau | Eichenfeld | Obermühlbach | Birkenstein | Wiesental | Rosenheide
name: Anna Schmidt | Lena Wagner | Petra Becker | Jutta Hoffmann | Sabine Krüger | Katrin Vogel
street: Lindenstraße | Bahnhofstraße | Marktgasse | Gartenstraße | Schulstraße | Mühlgasse
day: Montag | Dienstag | Mittwoch | Donnerstag | Freitag | Samstag | Sonntag
city: Lissabon | Edinburgh | Kyoto | Wien | Porto | Krakau | Sevilla | Bergen
veg: Tomaten | Bohnen | Möhren | Kartoffeln | Zwiebeln | Erbsen | Gurken | Zucchini
dish: Kartoffelsuppe | Apfelstrudel | Linseneintopf | Gemüseauflauf | Pfannkuchen | Käsespätzle
dish: Zwiebelkuchen | Rote Grütze
month: Januar | Februar | März | April | Mai | Juni | Juli | August | September | Oktober
month: November | Dezember
"""

DE_COOKING = """
T: Rezept der Woche: {dish}
T: So gelingt {dish} auch Anfängern
T: Kochen am {day}: {dish} wie bei Oma
Für {dish} braucht man keine teuren Zutaten, sondern vor allem etwas Geduld.
Zuerst wird die Zwiebel fein gewürfelt und in etwas Butter glasig gedünstet.
Meine Nachbarin {name} schwört darauf, alles bei niedriger Hitze langsam köcheln zu lassen.
Wer für die ganze Familie kocht, kann die doppelte Menge zubereiten und die Hälfte einfrieren.
Frische Kräuter kommen erst ganz zum Schluss dazu, damit ihr Aroma erhalten bleibt.
Die Reste halten sich im Kühlschrank zwei Tage, wenn man sie in einer Dose aufbewahrt.
Auf dem Wochenmarkt in der {street} gibt es am {day} besonders frisches Gemüse.
Kinder helfen gern beim Waschen des Gemüses oder beim Umrühren der Soße.
Ein Spritzer Zitronensaft kurz vor dem Servieren macht fast jedes Gericht frischer.
Dazu passt ein einfacher grüner Salat oder ein Stück frisches Bauernbrot.
Lassen Sie das Essen vor dem Servieren noch {n} Minuten ruhen, damit sich die Aromen verbinden.
Wer regelmäßig selbst kocht, spart im Monat erstaunlich viel Geld.
Beim ersten Versuch muss nicht alles perfekt aussehen, denn am Ende zählt der Geschmack.
"""

DE_GARDENING = """
T: Gartentipps für den Frühling
T: Unser Gemüsebeet in {town}
T: Was jetzt im Garten zu tun ist
Sobald der Boden im Frühjahr abgetrocknet ist, kann man mit der Aussaat beginnen.
In unserem Beet wachsen in diesem Jahr vor allem {veg}, weil sie wenig Pflege brauchen.
Eine dünne Schicht Mulch hält die Feuchtigkeit im Boden und unterdrückt das Unkraut.
Gießen Sie am besten früh am Morgen, dann verdunstet weniger Wasser.
Meine Nachbarin {name} sammelt Regenwasser in einer großen Tonne hinter dem Schuppen.
Schnecken lassen sich mit einem einfachen Zaun aus Kupferband fernhalten.
Der Kompost im hinteren Teil des Gartens liefert jedes Jahr wertvolle Erde.
Wer wenig Platz hat, kann Kräuter auch auf dem Balkon in Töpfen ziehen.
Bienen und Schmetterlinge freuen sich über eine Ecke mit Wildblumen.
Nach etwa {n} Tagen zeigen sich die ersten kräftigen Pflänzchen.
Im Herbst werden die Beete abgeräumt und mit Laub abgedeckt.
Ein Gartentagebuch hilft dabei, aus den Fehlern des Vorjahres zu lernen.
"""

DE_BICYCLES = """
T: Das Fahrrad fit machen für die Saison
T: Mit dem Rad zur Arbeit: ein Erfahrungsbericht
T: Kleine Reparaturen am Fahrrad selbst erledigen
Vor der ersten Fahrt im Frühling lohnt sich ein gründlicher Blick auf Bremsen und Reifen.
Der Reifendruck sollte regelmäßig geprüft werden, denn zu weiche Reifen machen das Fahren mühsam.
Eine saubere und gut geölte Kette läuft leiser und hält deutlich länger.
Seit ich mit dem Rad zur Arbeit fahre, brauche ich morgens kaum länger als mit dem Bus.
Meine Kollegin {name} fährt jeden Tag {n} Kilometer, egal bei welchem Wetter.
Ein Flicken und eine kleine Pumpe gehören bei jeder Tour in die Satteltasche.
In {town} gibt es seit letztem Jahr einen neuen Radweg entlang des Flusses.
Helle Lichter vorne und hinten sind in der dunklen Jahreszeit besonders wichtig.
Wer unsicher ist, kann in der Fahrradwerkstatt in der {street} um Rat fragen.
Ein gutes Schloss ist teuer, aber immer noch billiger als ein neues Fahrrad.
Nach einer Regenfahrt sollte man das Rad kurz abwischen und die Kette trocknen.
Für lange Strecken ist ein bequemer Sattel wichtiger als ein leichter Rahmen.
"""

DE_TRAVEL = """
T: Ein Wochenende in {city}
T: Reisebericht: Mit dem Zug nach {city}
T: Tipps für die erste Reise nach {city}
Wir sind mit dem Nachtzug nach {city} gefahren und kamen ausgeruht am Morgen an.
Die Altstadt lässt sich am besten zu Fuß erkunden, denn viele Gassen sind für Autos gesperrt.
Unser kleines Hotel lag ruhig, aber nur wenige Minuten vom Bahnhof entfernt.
Am ersten Abend haben wir in einem Lokal gegessen, das uns eine Einheimische empfohlen hatte.
Museen sind am Vormittag meist weniger voll als am Nachmittag.
Eine Tageskarte für Bus und Straßenbahn lohnt sich schon ab drei Fahrten.
Meine Freundin {name} hatte vorher eine Liste mit Orten abseits der Sehenswürdigkeiten gemacht.
Für die Rückreise sollte man ein wenig Puffer einplanen, falls ein Zug Verspätung hat.
Nach {n} Tagen hatten wir das Gefühl, die Stadt schon ein bisschen zu kennen.
Ein paar Wörter in der Landessprache öffnen oft Türen und sorgen für ein Lächeln.
Leichtes Gepäck macht das Reisen mit Bahn und Bus viel angenehmer.
Wer früh aufsteht, erlebt die Straßen noch ruhig und ohne Reisegruppen.
"""

DE_TOWN = """
T: Neues aus {town}
T: Die Geschichte von {town}
T: {town}: Stadtrat beschließt neue Pläne
Am {date} hat der Stadtrat von {town} über die Sanierung der alten Brücke beraten.
Die Bauarbeiten sollen im Frühjahr beginnen und etwa {n} Monate dauern.
{town} wurde vermutlich im zwölften Jahrhundert als kleines Dorf an einer Furt gegründet.
Die alte Mühle am Fluss war über Jahrhunderte der wichtigste Arbeitgeber des Ortes.
Bürgermeisterin {name} betonte, dass die Anwohner früh informiert werden sollen.
Im Heimatmuseum in der {street} kann man Fotos aus den Gründerjahren sehen.
Der Wochenmarkt findet künftig auch am {day} statt.
Viele Vereine beteiligen sich am Stadtfest, das jedes Jahr im Sommer gefeiert wird.
Nach dem großen Brand wurde die Kirche im neunzehnten Jahrhundert wieder aufgebaut.
Die Bibliothek verlängert ihre Öffnungszeiten und bietet nun auch Kurse für Senioren an.
Ein neuer Spielplatz am Stadtpark soll noch vor den Sommerferien fertig werden.
Die Eisenbahn brachte im Jahr 1871 den ersten großen Aufschwung in die kleine Stadt.
"""

DE_WEATHER = """
T: Das Wetter am Wochenende
T: Wetterbericht für {town} und Umgebung
T: Sturm, Regen, Sonne: ein Rückblick auf den Monat
Am Wochenende wird es in {town} zunächst freundlich, später ziehen Wolken auf.
Die Temperaturen steigen am Nachmittag auf bis zu {n} Grad.
In der Nacht ist mit Frost zu rechnen, deshalb sollten empfindliche Pflanzen abgedeckt werden.
Der Wind weht mäßig aus Westen und frischt in Böen stark auf.
Ab {day} bringt ein Tiefdruckgebiet kräftigen Regen und einzelne Gewitter.
Autofahrer sollten am frühen Morgen mit Nebel und glatten Straßen rechnen.
Der vergangene Monat war deutlich wärmer und trockener als im langjährigen Durchschnitt.
Für die Landwirte kommt der Regen gerade zur richtigen Zeit.
Am Sonntag zeigt sich die Sonne wieder häufiger, und es bleibt weitgehend trocken.
Wer einen Ausflug plant, sollte trotzdem eine Regenjacke einpacken.
Die Wetterstation am Rathaus hat am {date} einen neuen Rekord gemessen.
Zur Mitte der Woche wird es spürbar kühler.
"""

# --------------------------------------------------------------------------------------------
# French
# --------------------------------------------------------------------------------------------

FR_WORDS = """
town: Montclair-sur-Vienne | Belleroche | Val-des-Saules | Fontenoy-le-Petit | Brémont
town: Lussac-les-Prés
name: Claire Martin | Sophie Dubois | Camille Laurent | Élise Moreau | Julie Petit
name: Nathalie Roux
street: rue des Lilas | rue du Moulin | rue de la Gare | place du Marché | rue Pasteur
street: place de l'Église
day: lundi | mardi | mercredi | jeudi | vendredi | samedi | dimanche
city: Lisbonne | Édimbourg | Kyoto | Vienne | Porto | Cracovie | Séville | Bergen
veg: tomates | courgettes | haricots verts | carottes | poireaux | pommes de terre | radis
veg: petits pois
dish: la soupe de lentilles | la tarte aux pommes | le gratin dauphinois | la ratatouille
dish: les crêpes au sucre | la quiche aux poireaux | le pot-au-feu | le clafoutis aux cerises
month: janvier | février | mars | avril | mai | juin | juillet | août | septembre | octobre
month: novembre | décembre
"""

FR_COOKING = """
T: Recette de la semaine : {dish}
T: Réussir {dish} sans stress
T: Le {day} en cuisine : {dish} maison
Pour préparer {dish}, il ne faut pas d'ingrédients chers, mais surtout un peu de patience.
Commencez par émincer un oignon et faites-le revenir doucement dans un filet d'huile d'olive.
Ma voisine {name} conseille de saler petit à petit et de goûter après chaque étape.
Si vous cuisinez pour toute la famille, doublez les quantités et congelez la moitié.
Les herbes fraîches s'ajoutent à la toute fin, sinon elles perdent leur parfum.
Les restes se conservent deux jours au réfrigérateur dans une boîte bien fermée.
Le marché de la {street} propose de beaux légumes de saison le {day} matin.
Les enfants adorent aider à laver les légumes ou à remuer la sauce.
Un filet de jus de citron juste avant de servir réveille presque tous les plats.
Servez avec une salade verte ou une bonne tranche de pain de campagne.
Laissez reposer le plat {n} minutes avant de servir pour que les saveurs se mélangent.
Cuisiner soi-même permet aussi de faire de vraies économies chaque mois.
Ne vous inquiétez pas si le premier essai n'est pas parfait : c'est le goût qui compte.
"""

FR_GARDENING = """
T: Conseils de jardinage pour le printemps
T: Notre potager à {town}
T: Au jardin ce mois-ci
Dès que la terre est bien ressuyée au printemps, on peut commencer les semis.
Cette année, nous cultivons surtout des {veg}, qui demandent peu d'entretien.
Une fine couche de paillis garde l'humidité du sol et limite les mauvaises herbes.
Il vaut mieux arroser tôt le matin, car l'eau s'évapore moins vite.
Ma voisine {name} récupère l'eau de pluie dans un grand tonneau derrière la cabane.
Le compost au fond du jardin fournit chaque année une terre riche et légère.
Sur un balcon, on peut très bien faire pousser des herbes aromatiques en pot.
Les abeilles et les papillons apprécient un coin de fleurs sauvages.
Après environ {n} jours, les premières pousses sortent de terre.
En automne, on nettoie les parcelles et on les couvre de feuilles mortes.
Tenir un carnet de jardin aide à ne pas répéter les erreurs de l'année précédente.
Contre les limaces, une simple barrière de cendre autour des plants donne de bons résultats.
"""

FR_BICYCLES = """
T: Préparer son vélo pour la saison
T: Aller au travail à vélo : mon expérience
T: Petites réparations de vélo à faire soi-même
Avant la première sortie du printemps, il est utile de vérifier les freins et les pneus.
Contrôlez souvent la pression des pneus, car un pneu dégonflé rend chaque trajet pénible.
Une chaîne propre et bien huilée fait moins de bruit et dure beaucoup plus longtemps.
Depuis que je vais au bureau à vélo, je ne mets presque pas plus de temps qu'en bus.
Ma collègue {name} parcourt {n} kilomètres chaque jour, qu'il pleuve ou qu'il vente.
Une rustine et une petite pompe devraient toujours se trouver dans la sacoche.
À {town}, une nouvelle piste cyclable longe la rivière depuis l'année dernière.
Un bon éclairage à l'avant et à l'arrière est indispensable en hiver.
En cas de doute, l'atelier de réparation de la {street} donne volontiers des conseils.
Un bon antivol coûte cher, mais bien moins qu'un vélo neuf.
Après une sortie sous la pluie, essuyez le cadre et séchez la chaîne.
Pour les longues distances, une selle confortable compte plus qu'un cadre léger.
"""

FR_TRAVEL = """
T: Un week-end à {city}
T: Carnet de voyage : en train jusqu'à {city}
T: Conseils pour un premier séjour à {city}
Nous avons pris le train de nuit pour {city} et nous sommes arrivés reposés le matin.
La vieille ville se découvre mieux à pied, car beaucoup de ruelles sont fermées aux voitures.
Notre petit hôtel était calme, tout en restant à quelques minutes de la gare.
Le premier soir, nous avons dîné dans un restaurant conseillé par une habitante du quartier.
Les musées sont en général moins fréquentés le matin que l'après-midi.
Un pass d'une journée pour le bus et le tramway devient rentable dès trois trajets.
Mon amie {name} avait préparé une liste d'endroits loin des grands sites touristiques.
Pour le retour, mieux vaut prévoir un peu de marge en cas de retard.
Au bout de {n} jours, nous avions l'impression de connaître un peu la ville.
Quelques mots dans la langue du pays ouvrent souvent des portes et font sourire.
Voyager léger rend les trajets en train et en bus beaucoup plus agréables.
En se levant tôt, on profite des rues encore calmes, sans groupes de touristes.
"""

FR_TOWN = """
T: Les nouvelles de {town}
T: L'histoire de {town}
T: {town} : le conseil municipal adopte de nouveaux projets
Le {date}, le conseil municipal de {town} a débattu de la rénovation du vieux pont.
Les travaux devraient commencer au printemps et durer environ {n} mois.
{town} a probablement été fondée au douzième siècle, autour d'un gué sur la rivière.
Pendant des siècles, le vieux moulin a été le principal employeur du village.
La maire, {name}, a promis que les riverains seraient informés très tôt.
Au musée local de la {street}, on peut voir des photos des premières années de la ville.
Le marché hebdomadaire aura désormais lieu aussi le {day}.
De nombreuses associations participent à la fête de la ville, organisée chaque été.
Après le grand incendie, l'église a été reconstruite au dix-neuvième siècle.
La bibliothèque élargit ses horaires et propose maintenant des ateliers pour les seniors.
Une nouvelle aire de jeux près du parc devrait ouvrir avant les vacances d'été.
L'arrivée du chemin de fer en 1871 a apporté le premier grand essor à la petite ville.
"""

FR_WEATHER = """
T: La météo du week-end
T: Prévisions pour {town} et ses environs
T: Tempête, pluie et soleil : retour sur le mois
Ce week-end, le temps sera d'abord agréable à {town}, puis les nuages arriveront le soir.
Les températures monteront jusqu'à {n} degrés l'après-midi.
Des gelées sont possibles pendant la nuit, pensez à protéger les plantes fragiles.
Le vent soufflera modérément d'ouest, avec de fortes rafales par moments.
À partir de {day}, une dépression apportera de fortes pluies et quelques orages.
Les automobilistes doivent s'attendre à du brouillard et à des routes glissantes le matin.
Le mois dernier a été nettement plus chaud et plus sec que la moyenne.
Pour les agriculteurs, cette pluie arrive au bon moment.
Dimanche, le soleil reviendra plus souvent et le temps restera sec.
Si vous prévoyez une sortie, emportez tout de même un imperméable.
La station météo de la mairie a enregistré un nouveau record le {date}.
Vers le milieu de la semaine, la fraîcheur se fera nettement sentir.
"""

# --------------------------------------------------------------------------------------------
# Spanish
# --------------------------------------------------------------------------------------------

ES_WORDS = """
town: Fuentesalada | Molinar de Abajo | Castrillo del Valle | Peñaverde | Olmedilla del Río
town: Santa Clara del Monte
name: Lucía García | Marta Fernández | Carmen Ruiz | Elena Navarro | Isabel Torres
name: Pilar Romero
street: calle Mayor | calle del Olmo | plaza de la Fuente | calle de los Molinos
street: plaza del Mercado | calle Real
day: lunes | martes | miércoles | jueves | viernes | sábado | domingo
city: Lisboa | Edimburgo | Kioto | Viena | Oporto | Cracovia | Sevilla | Bergen
veg: tomates | calabacines | judías verdes | zanahorias | puerros | patatas | lechugas
veg: pimientos
dish: tortilla de patatas | gazpacho | paella de verduras | lentejas estofadas | arroz con leche
dish: croquetas caseras | pisto manchego | sopa de ajo
month: enero | febrero | marzo | abril | mayo | junio | julio | agosto | septiembre | octubre
month: noviembre | diciembre
"""

ES_COOKING = """
T: Receta de la semana: {dish}
T: Cómo preparar {dish} sin complicaciones
T: Cocina de {day}: {dish} como en casa
Para preparar {dish} no hacen falta ingredientes caros, sino sobre todo un poco de paciencia.
Primero se pica una cebolla y se sofríe a fuego lento con un chorrito de aceite de oliva.
Mi vecina {name} dice que hay que salar poco a poco y probar después de cada paso.
Si cocinas para toda la familia, puedes hacer el doble y congelar la mitad.
Las hierbas frescas se añaden al final para que no pierdan su aroma.
Las sobras se conservan dos días en la nevera dentro de un recipiente bien cerrado.
En el mercado de la {street} venden verduras de temporada muy frescas cada {day}.
A los niños les encanta ayudar a lavar las verduras o a remover la salsa.
Unas gotas de limón justo antes de servir alegran casi cualquier plato.
Acompáñalo con una ensalada verde o con una buena rebanada de pan de pueblo.
Deja reposar el plato {n} minutos antes de servirlo para que se asienten los sabores.
Cocinar en casa también permite ahorrar bastante dinero cada mes.
No te preocupes si el primer intento no queda perfecto, porque lo importante es el sabor.
"""

ES_GARDENING = """
T: Consejos de jardinería para la primavera
T: Nuestro huerto en {town}
T: Qué hacer en el jardín este mes
En cuanto la tierra se seca un poco en primavera, se puede empezar a sembrar.
Este año cultivamos sobre todo {veg}, porque necesitan pocos cuidados.
Una capa fina de acolchado mantiene la humedad del suelo y frena las malas hierbas.
Es mejor regar temprano por la mañana, porque el agua se evapora menos.
Mi vecina {name} recoge el agua de lluvia en un bidón grande detrás del cobertizo.
El compost del fondo del jardín nos da cada año una tierra rica y suelta.
En un balcón se pueden cultivar hierbas aromáticas en macetas sin ningún problema.
A las abejas y a las mariposas les encanta un rincón con flores silvestres.
Después de unos {n} días, asoman los primeros brotes.
En otoño se limpian los bancales y se cubren con hojas secas.
Llevar un cuaderno del huerto ayuda a no repetir los errores del año anterior.
Contra los caracoles funciona bien una barrera sencilla de ceniza alrededor de las plantas.
"""

ES_BICYCLES = """
T: Poner a punto la bicicleta para la temporada
T: Ir al trabajo en bicicleta: mi experiencia
T: Pequeñas reparaciones de la bici que puedes hacer tú
Antes de la primera salida de la primavera conviene revisar bien los frenos y las ruedas.
Hay que comprobar a menudo la presión de las ruedas, porque una rueda blanda cansa mucho.
Una cadena limpia y bien engrasada hace menos ruido y dura mucho más.
Desde que voy a la oficina en bicicleta, tardo casi lo mismo que en autobús.
Mi compañera {name} recorre {n} kilómetros cada día, llueva o haga sol.
Un parche y una bomba pequeña siempre deberían ir en la alforja.
En {town} hay desde el año pasado un carril bici nuevo junto al río.
Una buena luz delantera y trasera es imprescindible en invierno.
Si tienes dudas, en el taller de la {street} te aconsejan con mucho gusto.
Un buen candado cuesta dinero, pero mucho menos que una bicicleta nueva.
Después de una salida con lluvia, seca el cuadro y la cadena con un trapo.
Para las distancias largas, un sillín cómodo importa más que un cuadro ligero.
"""

ES_TRAVEL = """
T: Un fin de semana en {city}
T: Diario de viaje: en tren hasta {city}
T: Consejos para una primera visita a {city}
Tomamos el tren nocturno a {city} y llegamos descansados por la mañana.
El casco antiguo se recorre mejor a pie, porque muchas callejuelas están cerradas al tráfico.
Nuestro pequeño hotel era tranquilo y estaba a pocos minutos de la estación.
La primera noche cenamos en un restaurante que nos recomendó una vecina del barrio.
Los museos suelen estar menos llenos por la mañana que por la tarde.
Un abono de un día para el autobús y el tranvía sale a cuenta a partir de tres viajes.
Mi amiga {name} había preparado una lista de lugares lejos de los sitios más turísticos.
Para la vuelta conviene dejar un margen por si el tren se retrasa.
Al cabo de {n} días, teníamos la sensación de conocer un poco la ciudad.
Unas cuantas palabras en el idioma del país abren muchas puertas y sacan sonrisas.
Viajar con poco equipaje hace mucho más cómodos los trayectos en tren y autobús.
Si madrugas, disfrutas de las calles tranquilas y sin grupos de turistas.
"""

ES_TOWN = """
T: Noticias de {town}
T: La historia de {town}
T: {town}: el ayuntamiento aprueba nuevos proyectos
El {date}, el pleno del ayuntamiento de {town} debatió la reforma del puente viejo.
Las obras comenzarán en primavera y durarán unos {n} meses.
{town} fue fundada probablemente en el siglo doce, junto a un vado del río.
Durante siglos, el viejo molino fue la principal fuente de trabajo del pueblo.
La alcaldesa, {name}, aseguró que los vecinos recibirán información desde el principio.
En el museo local de la {street} se pueden ver fotografías de los primeros años del pueblo.
A partir de ahora, el mercado semanal también se celebrará cada {day}.
Muchas asociaciones participan en las fiestas del pueblo, que se celebran cada verano.
Tras el gran incendio, la iglesia fue reconstruida en el siglo diecinueve.
La biblioteca amplía su horario y ofrece ahora talleres para personas mayores.
Un nuevo parque infantil junto a la alameda estará listo antes de las vacaciones de verano.
La llegada del ferrocarril en 1871 trajo el primer gran auge a la pequeña villa.
"""

ES_WEATHER = """
T: El tiempo para el fin de semana
T: Previsión para {town} y alrededores
T: Tormentas, lluvia y sol: resumen del mes
Este fin de semana el tiempo será agradable en {town}, aunque por la tarde llegarán nubes.
Las temperaturas subirán hasta {n} grados por la tarde.
Por la noche puede helar, así que conviene proteger las plantas más delicadas.
El viento soplará moderado del oeste, con rachas fuertes en algunos momentos.
A partir del {day}, una borrasca traerá lluvias intensas y alguna tormenta.
Los conductores deben contar con niebla y carreteras resbaladizas a primera hora.
El mes pasado fue bastante más cálido y seco de lo habitual.
Para los agricultores, esta lluvia llega en el momento justo.
El domingo volverá a salir el sol con más frecuencia y no se esperan lluvias.
Si tienes pensada una excursión, lleva de todos modos un chubasquero.
La estación meteorológica del ayuntamiento registró un nuevo récord el {date}.
A mitad de semana bajarán las temperaturas de forma notable.
"""

# --------------------------------------------------------------------------------------------
# Russian
# --------------------------------------------------------------------------------------------

RU_WORDS = """
town: Кленовск | Тихореченск | Светлоборск | Малиновск | Зареченск | Ольховск
name: Ольга Иванова | Наталья Петрова | Елена Соколова | Марина Орлова | Татьяна Климова
name: Ирина Белова
street: на Садовой улице | на Речной улице | на Школьной улице | на Мельничной улице
street: на Вокзальной улице | на Луговой улице
day: в понедельник | во вторник | в среду | в четверг | в пятницу | в субботу | в воскресенье
city: в Лиссабоне | в Эдинбурге | в Киото | в Вене | в Порту | в Кракове | в Севилье | в Бергене
veg: помидоры | огурцы | кабачки | перцы | бобы | тыквы | баклажаны
dish: борщ | плов | омлет | грибной суп | овощное рагу | картофельное пюре | пирог с капустой
dish: салат с фасолью
month: января | февраля | марта | апреля | мая | июня | июля | августа | сентября | октября
month: ноября | декабря
"""

RU_COOKING = """
T: Рецепт недели: {dish}
T: Как приготовить домашний обед без лишних хлопот
T: Готовим в выходные: {dish}
Чтобы приготовить {dish}, не нужны дорогие продукты, нужно лишь немного терпения.
Сначала мелко нарежьте лук и обжарьте его на небольшом огне до мягкости.
Моя соседка {name} советует солить понемногу и пробовать блюдо после каждого шага.
Если вы готовите на всю семью, сделайте двойную порцию и заморозьте половину.
Свежую зелень добавляют в самом конце, иначе она теряет свой аромат.
Остатки можно хранить в холодильнике два дня в плотно закрытом контейнере.
На рынке {street} {day} продают очень свежие овощи с местных огородов.
Дети с удовольствием помогают мыть овощи или помешивать соус.
Несколько капель лимонного сока перед подачей освежают почти любое блюдо.
Подавайте с простым зелёным салатом или куском свежего хлеба.
Перед подачей дайте блюду постоять {n} минут, чтобы вкусы соединились.
Когда готовишь дома, за месяц можно сэкономить удивительно много денег.
Не переживайте, если в первый раз получится не идеально: главное — вкус.
"""

RU_GARDENING = """
T: Советы для огорода весной
T: Наш огород в городе {town}
T: Что сделать в саду в этом месяце
Как только земля весной немного подсохнет, можно начинать посев.
В этом году на грядках у нас растут в основном {veg}, потому что они не требуют особого ухода.
Тонкий слой мульчи сохраняет влагу в почве и сдерживает сорняки.
Поливать лучше рано утром, тогда вода испаряется медленнее.
Моя соседка {name} собирает дождевую воду в большую бочку за сараем.
Компост в дальнем углу сада каждый год даёт нам рыхлую и плодородную землю.
Даже на балконе можно выращивать пряные травы в горшках.
Пчёлам и бабочкам нравится уголок с полевыми цветами.
Примерно через {n} дней появляются первые всходы.
Осенью грядки убирают и укрывают опавшими листьями.
Садовый дневник помогает не повторять ошибок прошлого года.
От слизней хорошо помогает простой барьер из золы вокруг растений.
"""

RU_BICYCLES = """
T: Готовим велосипед к сезону
T: На работу на велосипеде: мой опыт
T: Мелкий ремонт велосипеда своими руками
Перед первой весенней поездкой стоит внимательно проверить тормоза и шины.
Давление в шинах нужно проверять регулярно, ведь на спущенных колёсах ехать тяжело.
Чистая и хорошо смазанная цепь работает тише и служит гораздо дольше.
С тех пор как я езжу на работу на велосипеде, дорога занимает почти столько же, сколько на автобусе.
Моя коллега {name} каждый день проезжает {n} километров в любую погоду.
Заплатка и маленький насос всегда должны лежать в велосумке.
В городе {town} с прошлого года вдоль реки проходит новая велодорожка.
Яркие фонари спереди и сзади особенно важны в тёмное время года.
Если сомневаетесь, спросите совета в веломастерской {street}.
Хороший замок стоит недёшево, но всё равно дешевле нового велосипеда.
После поездки под дождём протрите раму и просушите цепь.
Для дальних поездок удобное седло важнее лёгкой рамы.
"""

RU_TRAVEL = """
T: Выходные {city}
T: Путевые заметки: неделя {city}
T: Советы для первой поездки: что посмотреть {city}
Мы поехали на ночном поезде и утром прибыли отдохнувшими.
Несколько дней {city} пролетели очень быстро.
Старый город лучше всего осматривать пешком, потому что многие улочки закрыты для машин.
Наша маленькая гостиница была тихой и находилась в нескольких минутах от вокзала.
В первый вечер мы ужинали в кафе, которое нам посоветовала местная жительница.
Утром в музеях обычно меньше посетителей, чем после обеда.
Проездной на автобус и трамвай на один день окупается уже после трёх поездок.
Моя подруга {name} заранее составила список мест вдали от главных достопримечательностей.
На обратную дорогу лучше заложить немного времени на случай, если поезд опоздает.
Через {n} дней нам казалось, что мы уже немного знаем этот город.
Несколько слов на местном языке часто открывают двери и вызывают улыбку.
С лёгким багажом путешествовать на поезде и автобусе гораздо удобнее.
Если встать пораньше, можно увидеть улицы спокойными и без туристических групп.
"""

RU_TOWN = """
T: Новости города {town}
T: История города {town}
T: Город {town}: совет одобрил новые планы
{date} городской совет обсудил ремонт старого моста.
Работы должны начаться весной и продлиться около {n} месяцев.
Город {town} был основан, по всей видимости, в двенадцатом веке у брода через реку.
Несколько столетий старая мельница у реки оставалась главным местом работы для жителей.
Глава города {name} пообещала, что жителей будут информировать заранее.
В краеведческом музее {street} можно увидеть фотографии первых лет города.
Еженедельная ярмарка теперь будет проходить и {day}.
Многие клубы и кружки участвуют в городском празднике, который проходит каждое лето.
После большого пожара церковь была восстановлена в девятнадцатом веке.
Библиотека продлевает часы работы и теперь проводит занятия для пожилых людей.
Новая детская площадка у городского парка должна открыться до летних каникул.
Железная дорога, пришедшая сюда в 1871 году, принесла маленькому городу первый подъём.
"""

RU_WEATHER = """
T: Погода на выходные
T: Прогноз погоды: город {town} и окрестности
T: Бури, дожди и солнце: итоги месяца
В выходные в городе {town} сначала будет солнечно, а к вечеру придут облака.
Днём температура поднимется до {n} градусов.
Ночью возможны заморозки, поэтому нежные растения лучше укрыть.
Ветер будет умеренным, западным, временами с сильными порывами.
Уже {day} циклон принесёт сильные дожди и местами грозы.
Рано утром водителям стоит быть готовыми к туману и скользким дорогам.
Прошлый месяц оказался заметно теплее и суше обычного.
Для фермеров этот дождь пришёлся как нельзя кстати.
В воскресенье солнце будет выглядывать чаще, и осадков не ожидается.
Если вы планируете прогулку за город, всё же возьмите с собой дождевик.
Метеостанция у здания администрации зафиксировала новый рекорд {date}.
К середине недели заметно похолодает.
"""

# --------------------------------------------------------------------------------------------
# Chinese (simplified)
# --------------------------------------------------------------------------------------------

ZH_WORDS = """
town: 青溪镇 | 柳湾镇 | 石桥镇 | 松岭镇 | 云水镇 | 枫林镇
name: 王丽 | 李静 | 张敏 | 刘芳 | 陈雪 | 杨洁
street: 梧桐路 | 南门街 | 河滨路 | 文化路 | 新华街 | 东风路
day: 星期一 | 星期二 | 星期三 | 星期四 | 星期五 | 星期六 | 星期日
city: 里斯本 | 爱丁堡 | 京都 | 维也纳 | 波尔图 | 克拉科夫 | 塞维利亚 | 卑尔根
veg: 西红柿 | 黄瓜 | 豆角 | 胡萝卜 | 茄子 | 辣椒 | 南瓜 | 生菜
dish: 番茄炒蛋 | 红烧豆腐 | 土豆炖牛肉 | 蔬菜汤 | 葱油饼 | 饺子 | 酸辣土豆丝 | 蘑菇炒青菜
"""

ZH_COOKING = """
T: 本周食谱：{dish}
T: 在家轻松做{dish}
T: 周末下厨：{dish}的家常做法
做{dish}并不需要昂贵的食材，最重要的是多一点耐心。
先把洋葱切成小丁，用少许油小火慢慢炒软，香味就出来了。
我的邻居{name}总是说，盐要一点一点地放，每放一次都要尝一尝。
如果给全家人做饭，可以一次做两份，把一半放进冰箱冷冻起来。
新鲜的香草最好在出锅前再放，否则香味很快就会散掉。
吃不完的饭菜用密封盒装好，放在冰箱里可以保存两天。
{street}的菜市场每到{day}早上都有很新鲜的本地蔬菜。
孩子们很喜欢帮忙洗菜，或者在旁边搅拌酱汁。
上桌前挤几滴柠檬汁，几乎能让每道菜的味道都更清爽。
配上一碗白米饭或者一盘清淡的凉拌菜，就是一顿很舒服的晚餐。
出锅后先让菜静置{n}分钟，这样味道会更加融合。
经常在家做饭，一个月下来能省下不少钱。
第一次做得不好看也没关系，最重要的是味道。
"""

ZH_GARDENING = """
T: 春季种菜小技巧
T: 我们在{town}的小菜园
T: 这个月花园里该做些什么
春天土壤稍微干一些以后，就可以开始播种了。
今年我们的菜地里主要种了{veg}，因为它不太需要照顾。
在土壤表面铺一层薄薄的覆盖物，可以保持水分，也能减少杂草。
最好在清晨浇水，这样水分蒸发得比较少。
我的邻居{name}在小屋后面放了一个大桶，专门用来收集雨水。
院子角落里的堆肥每年都能给我们提供肥沃松软的土壤。
即使只有一个阳台，也可以用花盆种一些香草。
蜜蜂和蝴蝶很喜欢院子里种满野花的那个角落。
大约{n}天以后，第一批嫩芽就会从土里冒出来。
到了秋天，要把菜地清理干净，再盖上一层落叶。
记一本种菜日记，可以避免重复去年犯过的错误。
在植物周围撒一圈草木灰，可以有效地防止蜗牛和鼻涕虫。
"""

ZH_BICYCLES = """
T: 新季节前给自行车做个保养
T: 骑车上班：我的一点体会
T: 自己动手修自行车的小窍门
春天第一次骑车出门之前，最好仔细检查一下刹车和轮胎。
轮胎气压要经常检查，因为气不足的时候骑起来会特别累。
干净并且上好油的链条声音更小，用的时间也更长。
自从我骑自行车上班以后，路上花的时间和坐公交车差不多。
我的同事{name}每天骑{n}公里，不管刮风还是下雨。
补胎片和小打气筒应该一直放在车包里。
从去年开始，{town}沿着河边修了一条新的自行车道。
在天黑得早的季节，前后都装上明亮的车灯非常重要。
如果拿不准，可以去{street}的自行车修理店问问师傅。
一把好锁虽然不便宜，但总比买一辆新车便宜得多。
下雨天骑完车以后，要把车架擦干净，把链条擦干。
长途骑行的时候，舒服的车座比轻巧的车架更重要。
"""

ZH_TRAVEL = """
T: 在{city}的一个周末
T: 游记：坐火车去{city}
T: 第一次去{city}旅行的几点建议
我们坐夜班火车去了{city}，第二天早上到的时候精神很好。
老城区最适合步行游览，因为很多小巷都不允许汽车进入。
我们住的小旅馆很安静，离火车站只有几分钟的路。
第一天晚上，我们去了一家当地人推荐的小饭馆吃饭。
博物馆上午的游客通常比下午少。
公交和有轨电车的一日票，只要坐三次以上就很划算。
我的朋友{name}出发前就列了一张清单，上面都是游客不太去的地方。
回程的时候最好多留一点时间，以防火车晚点。
过了{n}天，我们觉得自己已经对这座城市有点熟悉了。
会说几句当地的语言，常常能换来别人的微笑和帮助。
行李带得少一些，坐火车和汽车的时候会轻松很多。
如果早点起床，就能看到没有旅游团的安静街道。
"""

ZH_TOWN = """
T: {town}新闻
T: {town}的历史
T: {town}议会通过了新的计划
{date}，{town}议会讨论了老桥的维修问题。
工程预计明年春天开工，大约需要{n}个月。
据说{town}最早是在十二世纪建立的，当时只是河边渡口旁的一个小村子。
几百年来，河边的老磨坊一直是当地最重要的工作场所。
镇长{name}表示，会提前把施工安排通知给附近的居民。
在{street}的地方博物馆里，可以看到小镇早年的老照片。
从下个月起，每周的集市在{day}也会开放。
每年夏天的小镇节日都有很多社团和协会参加。
那场大火之后，镇上的教堂在十九世纪重新修建起来。
图书馆延长了开放时间，还为老年人开设了新的课程。
公园旁边的新儿童游乐场预计在暑假前完工。
1871年铁路通到这里，给这个小镇带来了第一次大的发展。
"""

ZH_WEATHER = """
T: 周末天气预报
T: {town}及周边地区天气
T: 暴风、雨水和阳光：本月天气回顾
这个周末{town}先是晴好天气，傍晚以后云量会逐渐增多。
下午的最高气温将升到{n}摄氏度左右。
夜间可能出现霜冻，怕冷的植物最好盖起来。
风力中等，以西风为主，有时会出现较强的阵风。
从{day}开始，一个低气压将带来大雨，局部地区还有雷阵雨。
清晨开车的朋友要注意大雾和湿滑的路面。
上个月的气温明显高于往年同期，降水也偏少。
对农民来说，这场雨来得正是时候。
星期天太阳出来的时间会更多，基本不会下雨。
如果打算出门郊游，最好还是带上一件雨衣。
{date}，镇政府旁边的气象站测到了新的纪录。
到了周中，气温会明显下降。
"""

# --------------------------------------------------------------------------------------------
# Japanese
# --------------------------------------------------------------------------------------------

JA_WORDS = """
town: 青葉町 | 桜川町 | 松原町 | 緑ヶ丘町 | 川辺町 | 柳瀬町
name: 佐藤さん | 鈴木さん | 高橋さん | 田中さん | 伊藤さん | 山本さん
street: 駅前通り | 本町通り | 中央通り | 川沿いの商店街 | 役場前の広場 | 北口の商店街
day: 月曜日 | 火曜日 | 水曜日 | 木曜日 | 金曜日 | 土曜日 | 日曜日
city: リスボン | エディンバラ | 京都 | ウィーン | ポルト | クラクフ | セビリア | ベルゲン
veg: トマト | きゅうり | なす | ピーマン | にんじん | かぼちゃ | 枝豆 | レタス
dish: 肉じゃが | 親子丼 | 野菜カレー | 豚汁 | 卵焼き | 焼きそば | 鮭の塩焼き | 煮込みハンバーグ
"""

JA_COOKING = """
T: 今週のレシピ：{dish}
T: 初心者でも簡単な{dish}
T: 週末の台所から：家庭の{dish}
{dish}を作るのに高い材料は必要ありません。大切なのは少しの根気です。
まず玉ねぎを細かく刻み、少量の油で弱火にかけてじっくり炒めます。
近所に住む{name}は、塩は少しずつ加えて、そのたびに味見をするのがいいと言っています。
家族みんなの分を作るなら、倍の量を作って半分を冷凍しておくと便利です。
香りのよい薬味は、風味が飛ばないように最後に加えましょう。
残ったおかずは、ふたの閉まる容器に入れれば冷蔵庫で二日ほど持ちます。
{street}の市場では、{day}の朝に地元でとれた新鮮な野菜が並びます。
子どもたちは野菜を洗ったり、鍋をかき混ぜたりするのを喜んで手伝ってくれます。
盛り付ける直前にレモンを少し絞ると、たいていの料理がさっぱりと仕上がります。
炊きたてのご飯とみそ汁を添えれば、それだけで立派な夕食になります。
火を止めたら{n}分ほど置いておくと、味がよくなじみます。
家で料理をするようになってから、毎月の食費がずいぶん減りました。
最初は見た目がいまひとつでも気にしないでください。大事なのは味です。
"""

JA_GARDENING = """
T: 春の家庭菜園のコツ
T: {town}の小さな畑から
T: 今月の庭仕事
春になって土が少し乾いてきたら、種まきを始めることができます。
今年の畑では、手間があまりかからない{veg}を中心に育てています。
土の表面に薄くわらを敷いておくと、乾燥を防ぎ、雑草も生えにくくなります。
水やりは、蒸発が少ない朝早い時間に行うのがおすすめです。
隣の{name}は、物置の裏に大きなタンクを置いて雨水をためています。
庭の奥にある堆肥は、毎年ふかふかした栄養のある土になってくれます。
ベランダしかなくても、プランターでハーブを育てることができます。
野の花を植えた一角には、ミツバチやチョウがよく集まってきます。
{n}日ほどたつと、最初の芽が土から顔を出します。
秋には畑を片付けて、落ち葉で土を覆っておきます。
畑の記録をつけておくと、前の年と同じ失敗をしなくてすみます。
ナメクジ対策には、苗のまわりに灰をまいておく方法がよく効きます。
"""

JA_BICYCLES = """
T: シーズン前の自転車点検
T: 自転車通勤をはじめてみて
T: 自分でできる自転車の簡単な修理
春に初めて自転車に乗る前に、ブレーキとタイヤをしっかり点検しておきましょう。
タイヤの空気が足りないとペダルが重くなるので、空気圧はこまめに確認してください。
きれいに掃除して油をさしたチェーンは、音が静かで長持ちします。
自転車で会社に通うようになってから、通勤時間はバスとほとんど変わりません。
同僚の{name}は、雨の日も風の日も毎日{n}キロを走っています。
パンク修理キットと小さな空気入れは、いつもかばんに入れておくと安心です。
{town}では、去年から川沿いに新しい自転車道ができました。
日が短い季節には、前後に明るいライトをつけることがとても大切です。
わからないことがあれば、{street}にある自転車店で相談してみるといいでしょう。
丈夫な鍵は安くありませんが、新しい自転車を買うよりはずっと安く済みます。
雨の中を走ったあとは、フレームをふいてチェーンを乾かしておきましょう。
長い距離を走るときは、軽いフレームよりも座り心地のいいサドルが大事です。
"""

JA_TRAVEL = """
T: {city}で過ごした週末
T: 旅の記録：列車で{city}へ
T: はじめての{city}旅行のヒント
私たちは夜行列車で{city}へ向かい、朝にはすっきりした気分で到着しました。
旧市街は車が入れない路地が多いので、歩いて回るのがいちばんです。
泊まった小さなホテルは静かで、駅から歩いて数分の場所にありました。
最初の夜は、地元の人に教えてもらった小さな食堂で夕食をとりました。
美術館や博物館は、午後よりも午前中のほうがすいていることが多いです。
バスと路面電車の一日乗車券は、三回以上乗ればもとが取れます。
友人の{name}は、出発前に観光客があまり行かない場所のリストを作ってくれました。
帰りの列車が遅れることもあるので、時間には余裕を持っておきましょう。
{n}日ほど過ごすと、その町のことが少しわかってきたような気がしました。
現地の言葉をいくつか覚えておくと、相手が笑顔になってくれることがよくあります。
荷物を少なくすると、列車やバスでの移動がずっと楽になります。
早起きをすれば、団体客のいない静かな通りを歩くことができます。
"""

JA_TOWN = """
T: {town}だより
T: {town}の歴史をたどる
T: {town}議会、新しい計画を承認
{date}、{town}の町議会で古い橋の改修について話し合いが行われました。
工事は春に始まり、およそ{n}か月かかる見込みです。
{town}は、十二世紀ごろに川の渡し場のそばの小さな村として始まったと言われています。
川のほとりの古い水車小屋は、何百年ものあいだ町でいちばん大きな働き口でした。
町長の{name}は、工事の予定を早めに住民に知らせると約束しました。
{street}にある郷土資料館では、町ができたころの古い写真を見ることができます。
来月から、毎週の朝市は{day}にも開かれることになりました。
毎年夏に開かれる町のお祭りには、たくさんの団体やサークルが参加します。
大きな火事のあと、町の寺は十九世紀に建て直されました。
図書館は開館時間を延長し、お年寄り向けの講座も始めました。
公園の隣に新しくできる遊び場は、夏休み前に完成する予定です。
1871年に鉄道が通ったことで、小さな町は初めて大きく発展しました。
"""

JA_WEATHER = """
T: 週末の天気
T: {town}とその周辺の天気予報
T: 嵐、雨、そして晴れ：今月の天気をふり返る
今週末の{town}は、はじめは晴れますが、夕方からは雲が広がるでしょう。
午後の最高気温は{n}度まで上がる見込みです。
夜は霜が降りるおそれがあるので、寒さに弱い植物には覆いをかけてください。
風は西寄りでやや強く、ときおり強い突風が吹くでしょう。
{day}からは低気圧の影響で強い雨が降り、ところによっては雷雨となりそうです。
朝早く車を運転する方は、霧や路面の凍結に注意してください。
先月は例年に比べて気温がかなり高く、雨も少なめでした。
農家の人たちにとって、この雨はちょうどいい時期に降ってくれました。
日曜日は晴れ間が多くなり、雨の心配はほとんどないでしょう。
お出かけの予定がある方は、念のため雨具を持って行くと安心です。
{date}には、役場の近くにある観測所で新しい記録が観測されました。
週の半ばには、ぐっと気温が下がりそうです。
"""

# Slot values per language (``month`` is only used to format dates). Russian slots already
# carry the case and preposition the sentences need ("в субботу", "на Садовой улице", "в Вене").
SLOTS = {
    "en": _words(EN_WORDS),
    "de": _words(DE_WORDS),
    "fr": _words(FR_WORDS),
    "es": _words(ES_WORDS),
    "ru": _words(RU_WORDS),
    "zh": _words(ZH_WORDS),
    "ja": _words(JA_WORDS),
}
MONTHS = {lang: SLOTS[lang].pop("month") for lang in LANGS if "month" in SLOTS[lang]}
DATE_FORMATS = {
    "en": "{d} {month} {y}",
    "de": "{d}. {month} {y}",
    "fr": "{d} {month} {y}",
    "es": "{d} de {month} de {y}",
    "ru": "{d} {month} {y} года",
    "zh": "{y}年{m}月{d}日",
    "ja": "{y}年{m}月{d}日",
}

TOPICS: dict[str, dict[str, dict[str, list[str]]]] = {
    "en": {
        "cooking": _bank(EN_COOKING),
        "gardening": _bank(EN_GARDENING),
        "bicycles": _bank(EN_BICYCLES),
        "travel": _bank(EN_TRAVEL),
        "news": _bank(EN_NEWS),
        "history": _bank(EN_HISTORY),
        "software": _bank(EN_SOFTWARE),
        "weather": _bank(EN_WEATHER),
    },
    "de": {
        "cooking": _bank(DE_COOKING),
        "gardening": _bank(DE_GARDENING),
        "bicycles": _bank(DE_BICYCLES),
        "travel": _bank(DE_TRAVEL),
        "town": _bank(DE_TOWN),
        "weather": _bank(DE_WEATHER),
    },
    "fr": {
        "cooking": _bank(FR_COOKING),
        "gardening": _bank(FR_GARDENING),
        "bicycles": _bank(FR_BICYCLES),
        "travel": _bank(FR_TRAVEL),
        "town": _bank(FR_TOWN),
        "weather": _bank(FR_WEATHER),
    },
    "es": {
        "cooking": _bank(ES_COOKING),
        "gardening": _bank(ES_GARDENING),
        "bicycles": _bank(ES_BICYCLES),
        "travel": _bank(ES_TRAVEL),
        "town": _bank(ES_TOWN),
        "weather": _bank(ES_WEATHER),
    },
    "ru": {
        "cooking": _bank(RU_COOKING),
        "gardening": _bank(RU_GARDENING),
        "bicycles": _bank(RU_BICYCLES),
        "travel": _bank(RU_TRAVEL),
        "town": _bank(RU_TOWN),
        "weather": _bank(RU_WEATHER),
    },
    "zh": {
        "cooking": _bank(ZH_COOKING),
        "gardening": _bank(ZH_GARDENING),
        "bicycles": _bank(ZH_BICYCLES),
        "travel": _bank(ZH_TRAVEL),
        "town": _bank(ZH_TOWN),
        "weather": _bank(ZH_WEATHER),
    },
    "ja": {
        "cooking": _bank(JA_COOKING),
        "gardening": _bank(JA_GARDENING),
        "bicycles": _bank(JA_BICYCLES),
        "travel": _bank(JA_TRAVEL),
        "town": _bank(JA_TOWN),
        "weather": _bank(JA_WEATHER),
    },
}

# Section headings used when a longer post moves on to another topic.
SECTIONS = {
    "en": {
        "cooking": "In the kitchen",
        "gardening": "In the garden",
        "bicycles": "On two wheels",
        "travel": "On the road",
        "news": "Local news",
        "history": "From the archive",
        "software": "Tech corner",
        "weather": "Weather watch",
    },
    "de": {
        "cooking": "Aus der Küche",
        "gardening": "Im Garten",
        "bicycles": "Rund ums Rad",
        "travel": "Unterwegs",
        "town": "Aus der Stadt",
        "weather": "Das Wetter",
    },
    "fr": {
        "cooking": "En cuisine",
        "gardening": "Au jardin",
        "bicycles": "À vélo",
        "travel": "En voyage",
        "town": "Vie locale",
        "weather": "Météo",
    },
    "es": {
        "cooking": "En la cocina",
        "gardening": "En el huerto",
        "bicycles": "En bici",
        "travel": "De viaje",
        "town": "Vida local",
        "weather": "El tiempo",
    },
    "ru": {
        "cooking": "На кухне",
        "gardening": "В огороде",
        "bicycles": "На велосипеде",
        "travel": "В дороге",
        "town": "Жизнь города",
        "weather": "Погода",
    },
    "zh": {
        "cooking": "厨房里",
        "gardening": "小菜园",
        "bicycles": "骑车生活",
        "travel": "旅途中",
        "town": "小镇新闻",
        "weather": "天气",
    },
    "ja": {
        "cooking": "台所から",
        "gardening": "畑から",
        "bicycles": "自転車の話",
        "travel": "旅の話",
        "town": "町の話題",
        "weather": "天気",
    },
}

# Web sites per language and topic: (host, section, uses "www.", scheme). All hosts live under
# the reserved example.com / example.org / example.net domains.
SITES: dict[str, dict[str, tuple[str, str, bool, str]]] = {
    "en": {
        "cooking": ("kitchen-notes.example.com", "recipes", True, "https"),
        "gardening": ("allotment-diary.example.org", "diary", False, "https"),
        "bicycles": ("spokes-and-chains.example.net", "workshop", True, "https"),
        "travel": ("slow-rail-travel.example.com", "trips", True, "https"),
        "news": ("millbrook-gazette.example.com", "news", True, "https"),
        "history": ("millbrook-history.example.org", "articles", True, "http"),
        "software": ("terminal-tips.example.net", "tutorials", False, "https"),
        "weather": ("valley-weather.example.com", "forecast", True, "https"),
    },
    "de": {
        "cooking": ("kochen-zuhause.example.com", "rezepte", True, "https"),
        "gardening": ("gartenfreunde.example.org", "ratgeber", True, "https"),
        "bicycles": ("radwerkstatt.example.net", "tipps", False, "https"),
        "travel": ("bahnreisen-blog.example.com", "reiseberichte", True, "https"),
        "town": ("lindenauer-anzeiger.example.com", "lokales", True, "http"),
        "weather": ("wetter-regional.example.net", "vorhersage", True, "https"),
    },
    "fr": {
        "cooking": ("cuisine-facile.example.com", "recettes", True, "https"),
        "gardening": ("potager-malin.example.org", "conseils", True, "https"),
        "bicycles": ("velo-quotidien.example.net", "atelier", False, "https"),
        "travel": ("carnets-de-route.example.com", "voyages", True, "https"),
        "town": ("echo-de-belleroche.example.com", "actualites", True, "http"),
        "weather": ("meteo-locale.example.net", "previsions", True, "https"),
    },
    "es": {
        "cooking": ("cocina-de-casa.example.com", "recetas", True, "https"),
        "gardening": ("huerto-urbano.example.org", "consejos", True, "https"),
        "bicycles": ("taller-bici.example.net", "mecanica", False, "https"),
        "travel": ("diario-de-viaje.example.com", "viajes", True, "https"),
        "town": ("gaceta-del-valle.example.com", "noticias", True, "http"),
        "weather": ("tiempo-local.example.net", "prevision", True, "https"),
    },
    "ru": {
        "cooking": ("domashnyaya-kuhnya.example.com", "recepty", True, "https"),
        "gardening": ("ogorod-sovety.example.org", "sovety", True, "https"),
        "bicycles": ("velomaster.example.net", "remont", False, "https"),
        "travel": ("putevye-zametki.example.com", "poezdki", True, "https"),
        "town": ("klenovsk-vesti.example.com", "novosti", True, "http"),
        "weather": ("pogoda-region.example.net", "prognoz", True, "https"),
    },
    "zh": {
        "cooking": ("jiachangcai.example.com", "caipu", True, "https"),
        "gardening": ("xiaocaiyuan.example.org", "zhongcai", True, "https"),
        "bicycles": ("danche-shenghuo.example.net", "weixiu", False, "https"),
        "travel": ("lvxing-biji.example.com", "youji", True, "https"),
        "town": ("qingxi-xinwen.example.com", "xinwen", True, "http"),
        "weather": ("tianqi-yubao.example.net", "yubao", True, "https"),
    },
    "ja": {
        "cooking": ("katei-ryori.example.com", "recipe", True, "https"),
        "gardening": ("kitchen-garden-nikki.example.org", "nikki", True, "https"),
        "bicycles": ("jitensha-seibi.example.net", "seibi", False, "https"),
        "travel": ("tabi-no-kiroku.example.com", "tabi", True, "https"),
        "town": ("aoba-machi-dayori.example.com", "news", True, "http"),
        "weather": ("otenki-machi.example.net", "tenki", True, "https"),
    },
}

# --------------------------------------------------------------------------------------------
# Fake personal data (PII) and look-alikes that are not PII
# --------------------------------------------------------------------------------------------

# Romanised local parts for e-mail addresses, and invented mail domains.
EMAIL_USERS = {
    "en": ["ellen.whitford", "n.brooks", "priya.lal", "ruth.ellison", "hannah.cole"],
    "de": ["anna.schmidt", "lena.wagner", "p.becker", "jutta.hoffmann", "s.krueger"],
    "fr": ["claire.martin", "sophie.dubois", "c.laurent", "elise.moreau", "julie.petit"],
    "es": ["lucia.garcia", "marta.fernandez", "c.ruiz", "elena.navarro", "isabel.torres"],
    "ru": ["olga.ivanova", "n.petrova", "elena.sokolova", "marina.orlova", "t.klimova"],
    "zh": ["wang.li", "li.jing", "zhang.min", "liu.fang", "chen.xue"],
    "ja": ["sato.hanako", "y.suzuki", "takahashi.mai", "tanaka.yuki", "ito.aya"],
}
EMAIL_DOMAINS = {
    "en": ["inbox-example.com", "post-example.co.uk"],
    "de": ["mailbox-example.de", "postfach-beispiel.de"],
    "fr": ["courrier-example.fr", "boite-exemple.fr"],
    "es": ["correo-ejemplo.es", "buzon-ejemplo.es"],
    "ru": ["pochta-example.ru", "yashchik-example.ru"],
    "zh": ["youxiang-example.cn", "xinxiang-example.cn"],
    "ja": ["mail-example.jp", "yubin-example.jp"],
}

# PII sentences. Placeholders: email, phone_us, phone_uk, phone_de, phone_fr, ipv4, ipv6,
# card, iban, person.
PII_TEMPLATES = {
    "en": [
        "For questions about the booking, email {email} or call {phone_us}.",
        "You can reach our London office on {phone_uk} during working hours.",
        "The order was paid with card number {card}, and the receipt went to {email}.",
        "Please transfer the deposit to IBAN {iban} and quote your surname.",
        "The server logs show repeated logins from {ipv4} late at night.",
        "Our test machine answers on the IPv6 address {ipv6}.",
        "Contact person: {person}, {email}, phone {phone_us}.",
    ],
    "de": [
        "Bei Fragen erreichen Sie uns unter {email} oder telefonisch unter {phone_de}.",
        "Bitte überweisen Sie den Betrag auf das Konto mit der IBAN {iban}.",
        "Die Bestellung wurde mit der Kreditkarte {card} bezahlt.",
        "Laut Protokoll kam die Anfrage von der Adresse {ipv4}.",
    ],
    "fr": [
        "Pour toute question, écrivez à {email} ou appelez le {phone_fr}.",
        "Le paiement a été effectué avec la carte {card}.",
        "Merci de virer l'acompte sur l'IBAN {iban}.",
        "La connexion provenait de l'adresse IP {ipv4}.",
    ],
    "es": [
        "Si tienes dudas, escribe a {email} o llama a nuestra oficina de Londres al {phone_uk}.",
        "El pago se hizo con la tarjeta {card}.",
        "Según el registro, la petición llegó desde la dirección {ipv4}.",
    ],
    "ru": [
        "По всем вопросам пишите на {email} или звоните в лондонский офис: {phone_uk}.",
        "Оплата прошла по карте {card}.",
        "В журнале сервера видны входы с адреса {ipv4}.",
    ],
    "zh": [
        "如有疑问，请发邮件至{email}，或拨打伦敦办事处电话{phone_uk}。",
        "这笔订单是用信用卡{card}支付的。",
        "服务器日志显示，有人多次从{ipv4}登录。",
        "测试服务器的IPv6地址是{ipv6}。",
    ],
    "ja": [
        "ご不明な点は{email}までメールでお問い合わせください。",
        "お支払いにはクレジットカード{card}が使われました。",
        "サーバーのログには、{ipv4}からのアクセスが何度も記録されていました。",
        "ロンドン事務所の電話番号は{phone_uk}です。",
    ],
}
PII_PERSONS = ["Ellen Whitford", "Nadia Brooks", "Priya Lal", "Ruth Ellison", "Hannah Cole"]

# Things that look like PII but are not: version strings shaped like IPv4 addresses, dates,
# prices and order numbers. Placeholders: ver, iso_date, order, price.
LOOKALIKE_TEMPLATES = {
    "en": [
        "Update the app to version {ver} first, because older builds crash on start-up.",
        "Your order number is {order} and the total comes to {price}.",
        "Release {ver} fixed the bug that was reported on {iso_date}.",
        "The spring offer ends on {iso_date}, and the starter kit costs {price}.",
    ],
    "de": [
        "Installieren Sie zuerst die Version {ver}, ältere Versionen stürzen beim Start ab.",
        "Die Bestellnummer lautet {order}, der Gesamtpreis beträgt {price}.",
    ],
    "fr": [
        "Installez d'abord la version {ver}, car les anciennes versions plantent au démarrage.",
        "Votre numéro de commande est le {order} et le total s'élève à {price}.",
    ],
    "es": [
        "Instala primero la versión {ver}, porque las anteriores se cierran al arrancar.",
        "Tu número de pedido es {order} y el total asciende a {price}.",
    ],
}
PRICE_FORMATS = {"en": "${}.{:02d}", "de": "{},{:02d} €", "fr": "{},{:02d} €", "es": "{},{:02d} €"}

# --------------------------------------------------------------------------------------------
# Near-duplicate edits, boilerplate, short and code documents
# --------------------------------------------------------------------------------------------

NEAR_DUP_HEADERS = {
    "en": ["Last updated: {date}", "Posted in Community News", "[Updated] Minor corrections"],
    "de": ["Zuletzt aktualisiert: {date}", "Veröffentlicht in: Lokales"],
    "fr": ["Mis à jour le {date}", "Publié dans : Vie locale"],
    "es": ["Actualizado el {date}", "Publicado en: Vida local"],
    "ru": ["Обновлено: {date}", "Рубрика: Новости"],
    "zh": ["更新于{date}", "栏目：本地生活"],
    "ja": ["更新日：{date}", "カテゴリー：地域の話題"],
}
NEAR_DUP_FOOTERS = {
    "en": [
        "Thanks for reading! Share this post with a friend.",
        "Comments are closed for this article.",
    ],
    "de": ["Vielen Dank fürs Lesen!", "Die Kommentarfunktion ist geschlossen."],
    "fr": ["Merci de votre lecture !", "Les commentaires sont fermés."],
    "es": ["¡Gracias por leer!", "Los comentarios están cerrados."],
    "ru": ["Спасибо, что дочитали!", "Комментарии закрыты."],
    "zh": ["感谢阅读！", "本文评论已关闭。"],
    "ja": [
        "最後まで読んでいただき、ありがとうございました。",
        "この記事へのコメントは締め切りました。",
    ],
}

BOILERPLATE = {
    "en": {
        "nav": [
            "Home | About | Contact | Blog | Shop",
            "Home | News | Events | Recipes | Contact",
            "Menu: Home · Services · Prices · FAQ · Contact",
        ],
        "cookie": [
            "We use cookies to give you the best experience. Accept cookies | Manage "
            "preferences | Reject all",
            "This site uses cookies. By continuing to browse you agree. [Accept] [Settings]",
        ],
        "top": ["Skip to main content", "Search ...", "Log in | Register"],
        "share": [
            "Share on Facebook | Share on X | Share on WhatsApp | Share by email",
            "Share this: Facebook · X · LinkedIn · Email",
        ],
        "related": ["Related posts", "You may also like"],
        "footer": [
            "© 2024 {site}. All rights reserved.",
            "Privacy policy | Terms of use | Cookie settings | Accessibility",
            "Subscribe to our newsletter",
            "Follow us on Instagram",
            "Back to top ↑",
        ],
    },
    "de": {
        "nav": [
            "Startseite | Über uns | Kontakt | Impressum",
            "Startseite | Aktuelles | Termine | Rezepte | Kontakt",
        ],
        "cookie": [
            "Wir verwenden Cookies, um Ihnen ein optimales Erlebnis zu bieten. Alle "
            "akzeptieren | Einstellungen | Ablehnen"
        ],
        "top": ["Zum Inhalt springen", "Suche ...", "Anmelden | Registrieren"],
        "share": ["Teilen auf Facebook | Teilen auf X | Per E-Mail teilen"],
        "related": ["Das könnte Sie auch interessieren"],
        "footer": [
            "© 2024 {site}. Alle Rechte vorbehalten.",
            "Datenschutz | Impressum | Cookie-Einstellungen",
            "Newsletter abonnieren",
            "Nach oben ↑",
        ],
    },
    "fr": {
        "nav": [
            "Accueil | À propos | Contact | Mentions légales",
            "Accueil | Actualités | Agenda | Recettes | Contact",
        ],
        "cookie": [
            "Nous utilisons des cookies pour améliorer votre expérience. Tout accepter | "
            "Paramétrer | Refuser"
        ],
        "top": ["Aller au contenu", "Rechercher ...", "Connexion | Inscription"],
        "share": ["Partager sur Facebook | Partager sur X | Envoyer par e-mail"],
        "related": ["À lire aussi"],
        "footer": [
            "© 2024 {site}. Tous droits réservés.",
            "Politique de confidentialité | Conditions d'utilisation | Cookies",
            "S'abonner à la newsletter",
            "Retour en haut ↑",
        ],
    },
    "es": {
        "nav": [
            "Inicio | Quiénes somos | Contacto | Aviso legal",
            "Inicio | Noticias | Agenda | Recetas | Contacto",
        ],
        "cookie": [
            "Utilizamos cookies para mejorar tu experiencia. Aceptar todas | Configurar | Rechazar"
        ],
        "top": ["Ir al contenido", "Buscar ...", "Acceder | Registrarse"],
        "share": ["Compartir en Facebook | Compartir en X | Enviar por correo"],
        "related": ["También te puede interesar"],
        "footer": [
            "© 2024 {site}. Todos los derechos reservados.",
            "Política de privacidad | Condiciones de uso | Cookies",
            "Suscríbete al boletín",
            "Volver arriba ↑",
        ],
    },
}
BOILERPLATE_SITES = {
    "en": [
        "Greenfield Bakery",
        "Riverside Books",
        "Harwick Hardware",
        "Pennywell Pets",
        "Oakfield Dental Practice",
        "Westmere Flowers",
        "Brackenbury Bikes",
        "Thornby Tea Room",
    ],
    "de": ["Bäckerei Lindenau", "Blumen Eichenfeld", "Autohaus Wiesental"],
    "fr": ["Librairie Belleroche", "Boulangerie du Moulin", "Fleuriste Brémont"],
    "es": ["Panadería Peñaverde", "Ferretería del Valle"],
}

SHORT_DOCS = [
    ("en", "Page not found."),
    ("en", "Closed today, back on Monday."),
    ("de", "Danke für Ihren Besuch!"),
    ("fr", "Merci et à bientôt !"),
    ("es", "¡Hasta pronto!"),
    ("ru", "Страница не найдена."),
    ("zh", "敬请期待。"),
]

CODE_DOCS = [
    (
        "Quick tip: back up a folder with tar\n\n"
        "If you only need a simple backup of your notes folder, one tar command is enough. "
        "The archive name includes the date, so older backups are never overwritten.\n\n"
        "    tar -czf notes-$(date +%Y-%m-%d).tar.gz ~/notes\n"
        "    ls -lh notes-*.tar.gz\n\n"
        "Copy the archive to a second disk afterwards, because a backup on the same disk "
        "does not protect you when that disk fails."
    ),
    (
        "Counting words in a text file with Python\n\n"
        "This short script prints the ten most common words in a file. It lowercases "
        "everything first, so that capitalised and plain forms of a word are counted together."
        "\n\n"
        "    import sys\n"
        "    from collections import Counter\n\n"
        '    with open(sys.argv[1], encoding="utf-8") as f:\n'
        "        words = f.read().lower().split()\n\n"
        "    for word, count in Counter(words).most_common(10):\n"
        '        print(f"{count:5d}  {word}")\n\n'
        "Save it as wordcount.py and run it as python wordcount.py notes.txt in a terminal."
    ),
    (
        "Finding large files on a full disk\n\n"
        "When the disk is nearly full, it helps to see which files take up the most space. "
        "The following command lists the twenty largest files below your home folder.\n\n"
        "    find ~ -type f -size +100M -exec du -h {} + | sort -rh | head -n 20\n\n"
        "Check each file before deleting it, and empty the trash afterwards, otherwise the "
        "space is not actually freed."
    ),
]

# --------------------------------------------------------------------------------------------
# Synthetic ("model-written") summaries and question/answer pairs
# --------------------------------------------------------------------------------------------

SYNTH = {
    "en": {
        "intros": [
            "Here is a short summary of the article:",
            "Sure! The main points of the page are:",
            "In other words, the original text says the following.",
        ],
        "questions": [
            "What does the article about {topic} recommend?",
            "Can you summarise the post about {topic} in a few sentences?",
            "What are the most useful tips in this text about {topic}?",
        ],
        "labels": ["Question:", "Answer:"],
        "closings": [
            "In short, the text gives practical advice for everyday life.",
            "Overall, the page is a friendly and practical read.",
            "I hope this summary is helpful.",
        ],
        "topics": {
            "cooking": "home cooking",
            "gardening": "gardening",
            "bicycles": "cycling",
            "travel": "travel",
            "news": "local news",
            "history": "local history",
            "software": "software basics",
            "weather": "the weather",
        },
    },
    "de": {
        "intros": [
            "Hier ist eine kurze Zusammenfassung des Artikels:",
            "Gerne! Die wichtigsten Punkte der Seite sind:",
            "Mit anderen Worten sagt der Originaltext Folgendes:",
        ],
        "questions": [
            "Was empfiehlt der Artikel zum Thema {topic}?",
            "Kannst du den Beitrag zum Thema {topic} kurz zusammenfassen?",
            "Welche Tipps zum Thema {topic} sind in diesem Text am nützlichsten?",
        ],
        "labels": ["Frage:", "Antwort:"],
        "closings": [
            "Kurz gesagt gibt der Text praktische Ratschläge für den Alltag.",
            "Insgesamt ist die Seite freundlich geschrieben und sehr praktisch.",
            "Ich hoffe, diese Zusammenfassung hilft weiter.",
        ],
        "topics": {
            "cooking": "Kochen",
            "gardening": "Garten",
            "bicycles": "Fahrrad",
            "travel": "Reisen",
            "town": "Lokales",
            "weather": "Wetter",
        },
    },
    "fr": {
        "intros": [
            "Voici un court résumé de l'article :",
            "Bien sûr ! Voici les points principaux de la page :",
            "Autrement dit, le texte original explique ceci :",
        ],
        "questions": [
            "Que recommande l'article sur le thème « {topic} » ?",
            "Peux-tu résumer en quelques phrases le billet sur le thème « {topic} » ?",
            "Quels sont les conseils les plus utiles de ce texte sur « {topic} » ?",
        ],
        "labels": ["Question :", "Réponse :"],
        "closings": [
            "En bref, le texte donne des conseils pratiques pour la vie quotidienne.",
            "Dans l'ensemble, la page est agréable à lire et très pratique.",
            "J'espère que ce résumé vous sera utile.",
        ],
        "topics": {
            "cooking": "cuisine",
            "gardening": "jardinage",
            "bicycles": "vélo",
            "travel": "voyage",
            "town": "vie locale",
            "weather": "météo",
        },
    },
    "es": {
        "intros": [
            "Aquí tienes un breve resumen del artículo:",
            "¡Claro! Estos son los puntos principales de la página:",
            "Dicho de otro modo, el texto original explica lo siguiente:",
        ],
        "questions": [
            "¿Qué recomienda el artículo sobre {topic}?",
            "¿Puedes resumir en pocas frases la entrada sobre {topic}?",
            "¿Cuáles son los consejos más útiles de este texto sobre {topic}?",
        ],
        "labels": ["Pregunta:", "Respuesta:"],
        "closings": [
            "En resumen, el texto ofrece consejos prácticos para el día a día.",
            "En conjunto, la página es amena y muy práctica.",
            "Espero que este resumen te resulte útil.",
        ],
        "topics": {
            "cooking": "la cocina casera",
            "gardening": "el huerto",
            "bicycles": "la bicicleta",
            "travel": "los viajes",
            "town": "la vida local",
            "weather": "el tiempo",
        },
    },
    "ru": {
        "intros": [
            "Вот краткое содержание статьи:",
            "Конечно! Главные мысли страницы такие:",
            "Другими словами, в исходном тексте говорится следующее:",
        ],
        "questions": [
            "Что советует статья на тему «{topic}»?",
            "Можешь в нескольких предложениях пересказать заметку на тему «{topic}»?",
            "Какие советы из этого текста на тему «{topic}» самые полезные?",
        ],
        "labels": ["Вопрос:", "Ответ:"],
        "closings": [
            "Короче говоря, текст даёт практичные советы на каждый день.",
            "В целом страница написана дружелюбно и очень практично.",
            "Надеюсь, этот пересказ будет полезен.",
        ],
        "topics": {
            "cooking": "домашняя кухня",
            "gardening": "огород",
            "bicycles": "велосипед",
            "travel": "путешествия",
            "town": "жизнь города",
            "weather": "погода",
        },
    },
    "zh": {
        "intros": [
            "下面是这篇文章的简要总结：",
            "好的！这个页面的主要内容如下：",
            "换句话说，原文主要讲了以下几点：",
        ],
        "questions": [
            "这篇关于{topic}的文章有哪些建议？",
            "你能用几句话概括一下这篇关于{topic}的文章吗？",
            "这篇关于{topic}的文章里，最有用的建议是什么？",
        ],
        "labels": ["问题：", "回答："],
        "closings": [
            "总的来说，这篇文章提供了很多日常生活中实用的建议。",
            "整体来看，这个页面写得很亲切，也很实用。",
            "希望这个总结对你有帮助。",
        ],
        "topics": {
            "cooking": "家常菜",
            "gardening": "种菜",
            "bicycles": "自行车",
            "travel": "旅行",
            "town": "小镇生活",
            "weather": "天气",
        },
    },
    "ja": {
        "intros": [
            "記事の内容を簡単にまとめると、次のようになります。",
            "もちろんです。このページの主なポイントは以下のとおりです。",
            "言いかえると、元の文章には次のようなことが書かれています。",
        ],
        "questions": [
            "{topic}についての記事では、どんなことがすすめられていますか？",
            "{topic}に関するこの投稿を、いくつかの文で要約してもらえますか？",
            "{topic}についてのこの文章で、いちばん役に立つヒントは何ですか？",
        ],
        "labels": ["質問：", "回答："],
        "closings": [
            "まとめると、日々の暮らしに役立つ実用的なアドバイスが書かれた文章です。",
            "全体として、親しみやすく実用的なページだと言えます。",
            "この要約がお役に立てばうれしいです。",
        ],
        "topics": {
            "cooking": "家庭料理",
            "gardening": "家庭菜園",
            "bicycles": "自転車",
            "travel": "旅行",
            "town": "町の暮らし",
            "weather": "天気",
        },
    },
}

# --------------------------------------------------------------------------------------------
# The malformed lines of web/part-broken.jsonl
# --------------------------------------------------------------------------------------------

BROKEN_URL = "https://www.millbrook-gazette.example.com/news/2024/archive-{n}"
MALFORMED = [
    ("bad_json", '{{"id": "{id}", "url": "{url}", "text": "The council meeting was adjourned'),
    ("missing_text", '{{"id": "{id}", "url": "{url}"}}'),
    ("text_not_string", '{{"id": "{id}", "url": "{url}", "text": 404}}'),
]
