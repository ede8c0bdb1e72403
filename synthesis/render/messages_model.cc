#include "synthesis/render/messages_model.h"

namespace benchfleet::synthesis {

const ModelMessages& ModelMessagesEn() {
  static const ModelMessages m{
      .verdicts_section = "Verdicts of every setting",
      .targets_used = "Targets used: {file}. They are requirements, not measurements; each target below is cited "
                      "with its line in that file.",
      .figure_rule = "Warm runs are judged; a setting that has only cold runs (a container restarted for every "
                     "repetition) is judged on those, and says so. A setting's figure is its median when it has at least five accepted "
                     "runs, else its worst accepted run (the lowest rate, the longest time): a median over a few calls "
                     "would hide a collapse. A class' best setting is the one with the highest rate.",
      .task_heading = "Task {task}",
      .task_entry = "Targets entry {match}: one item is one {item}.",
      .no_targets = "No entry of the targets matches this task: its settings are listed without a verdict.",
      .use_max = "{use}: at most {target} s per {item}",
      .use_min = "{use}: at least {target} {items} per second",
      .use_interactive = " (one concurrent user)",
      .no_warm_cell = "No accepted run with a figure to judge.",
      .setting_cold = "cold runs only",
      .col_class = "Class",
      .col_setting = "Setting",
      .col_figure = "Figure",
      .col_basis = "Basis",
      .col_seconds_per_item = "s/{item}",
      .col_best = "Best of class",
      .basis_median = "median",
      .basis_worst_run = "worst run",
      .use_ok = "fine",
      .use_not_ok = "not",
      .best_mark = "yes",
      .no_mark = "—",
      .class_sentence = "{class}: best setting {setting}: {seconds} s/{item}: {judgement}.",
      .class_sentence_no_target = "{class}: best setting {setting}: {seconds} s/{item}.",
      .fine_for = "fine for {use}",
      .not_for = "not for {use}",
      .list_separator = ", ",

      .thresholds_section = "When to move to a dedicated GPU",
      .thresholds_intro = "Capacity of each class' best setting: its rate × {k3600} s/h × the hours worked per day "
                          "(targets); above that workload the setting no longer keeps up. Concurrent users: its rate "
                          "÷ the rate one interactive user needs (targets).",
      .no_threshold = "No task was measured on two classes or more: no threshold.",
      .reference_dedicated = "Reference: {class}, a dedicated GPU, setting {setting}.",
      .reference_fastest = "No class measured here is marked as a dedicated GPU in the targets: the fastest setting, "
                           "{class} {setting}, stands in as the reference.",
      .capacity_line = "{class} {setting}: {ips} {items}/s × {k3600} s/h × {hours} h/day = {day} {items}/day",
      .users_part = "; {ips} {items}/s ÷ {min} {items}/s per user = {users} concurrent users",
      .other_line = "Above {day} {items}/day, {class} no longer keeps up and {ref_class} does: {ref_ips} ÷ {ips} = "
                    "{ratio} times its rate.",
      .other_not_slower = "{ref_class} is not faster than {class}: {ref_ips} ÷ {ips} = {ratio}.",

      .cost_section = "Cost",
      .cost_intro = "Cost of one item on each class' best setting: the price per hour (targets) ÷ {k3600} s/h × "
                    "the seconds per item.",
      .no_cost = "No measured class has a price per hour in the targets: no cost is computed.",
      .cost_line = "{task} on {class} {setting}: {price} {currency}/h ÷ {k3600} s/h × {seconds} s/{item} = {cost} "
                   "{currency}/{item}",
      .cost_million = "; × {k1000000} = {cost} {currency} per million {items}",

      .rules_section = "Rules",
      .rules_intro = "Each rule is printed only when the measurements support it, and cites the figures it rests on.",
      .no_rule = "The measurements support no rule yet.",
      .rule_gpu_over_cpu = "Run {task} on the GPU on {machine}: {ratio} times the CPU's rate ({gpu} vs {cpu} "
                           "{items}/s; GPU {gpu_setting}, CPU {cpu_setting}).",
      .rule_cold_start = "Keep cold calls apart for {task} on {machine} {setting}: the first call takes {ratio} times "
                         "as long per {item} as a warm call ({cold} vs {warm}).",
      .rule_cache_hits = "{task}: runs whose work the server served from its execution cache ({codes}): {count}. "
                         "Give every run an input of its own (a new seed) so that the work is done again; they are "
                         "kept out of every figure.",
      .rule_prompt_cache_hits = "{task}: runs in which the server reused cached prompt tokens ({codes}): {count}. "
                                "Turn its prompt cache off (cache_prompt: false); they are kept out of every figure.",
      .rule_throughput_drop = "{task}: runs with a throughput drop across consecutive warm calls: {count} (first: "
                              "{reason}). Publish every run, never a median over a few calls.",
      .rule_fastest_class = "For {task}, {class} is the fastest class: {ratio} times {second_class} ({best} vs "
                            "{second} {items}/s, setting {setting}).",
      .rule_best_setting = "On {class} {setting}, {task} runs best with {best_matrix}: {ratio} times {worst_matrix} "
                           "({best} vs {worst} {items}/s).",
      .rule_failed_setting = "{task} fails on {machine} {setting}: every run failed ({count}; first error: "
                             "{message}).",
      .rule_memory_need = "{task} needs up to {memory} of {kind} on {machine} {setting}.",
      .rule_memory_need_of = "{task} needs up to {memory} of {kind} on {machine} {setting}, of the {capacity} "
                             "its conditions give.",
      .rule_fastest_drop = "{drop_class} reaches {burst} {items}/s in its first warm calls, then drops from call "
                           "{drop_call}: the comparison is on the rate it sustains.",
      .rule_cheapest = "For {task}, {class} is the cheapest machine that meets every target: {cost} {per} "
                       "({setting}), {ratio} times less than {second_class} ({second_cost} {per}).",
      .rule_per_million = "{currency} per million {items}",
      .rule_per_item = "{currency} per {item}",

      .image = "image",
      .images = "images",
      .token = "token",
      .tokens = "tokens",
      .request = "request",
      .requests = "requests",
      .run = "run",
      .runs = "runs",
      .answer_heading = "The answer",
      .answer_task = "{task}: {uses}.",
      .answer_meets_all = "meets {met}",
      .answer_meets_some = "meets {met}, not {missed}",
      .answer_meets_none = "meets no target",
      .and_word = " and ",
      .answer_machine = "{machine} {verdict} ({details})",
      .answer_sustained = "{figure} sustained from call {call}, after a burst of {burst}",
      .answer_no_target = "{task}: no targets entry matches this task; its figures are listed without a verdict.",
      .contents = "Contents",
      .decision_section = "Decision tables",
      .decision_intro = "One row per machine class: its best setting (the highest rate among its warm settings), "
                        "judged against the targets. Burst: the first warm calls; sustained: the calls from the first "
                        "one flagged as a drop. A figure is a median from five runs on, with its confidence interval "
                        "and coefficient of variation (CV), else every run's value or their range.",
      .decision_targets = "Targets: {targets}.",
      .col_machine = "Machine",
      .col_verdict = "Verdict",
      .col_working_setting = "Working setting",
      .col_burst = "Burst ({label})",
      .col_sustained = "Sustained ({label})",
      .col_runs = "Runs",
      .col_memory = "Memory needed",
      .col_cost = "Cost",
      .col_energy = "Energy",
      .verdict_judged_sustained = "— judged on the sustained rate, {figure} ({basis}): it drops from call {call}",
      .level_runs = "{range} (calls {calls})",
      .no_drop = "no drop",
      .runs_excluded = "{runs}; {excluded} excluded",
      .memory_of = "{memory} of {capacity} ({kind})",
      .memory_no_capacity = "{memory} ({kind})",
      .not_measured = "not measured",
      .no_price = "no price",
      .no_cost_column = "Cost: no class of this task has a price in the targets.",
      .no_energy_column = "Energy: not measured (no device energy counter on these runs).",
      .per_million = "{cost} {currency} per million {items}",
      .per_item = "{cost} {currency} per {item}",
      .watch_section = "What to watch",
      .watch_intro = "The traps and flags the records carry, in plain words; each names its runs (short ids; the "
                     "full ids and the servers' words are under \"Every flag\").",
      .watch_none = "No run is flagged.",
      .watch_cache_hit = "runs served from the server's execution cache: {count} ({runs}). Nothing was measured; such runs are kept out of every figure. Give every run an input of its own (a new seed).",
      .watch_prompt_cache = "runs in which the server reused cached prompt tokens: {count} ({runs}); kept out of every figure. Turn its prompt cache off.",
      .watch_drop = "warm runs with a throughput drop: {count} ({runs}) — {reason}. Burst and sustained are shown apart.",
      .watch_failed = "failed runs: {count} ({runs}) — {reason}",
      .watch_contended = "runs during which the host was busy with other work: {count} ({runs}); kept out — {reason}",
      .watch_throttled = "runs during which the device throttled: {count} ({runs}) — {reason}",
      .watch_no_offload = "runs in which the server offloaded no layer to the GPU: {count} ({runs}); kept out — {reason}",
      .watch_partial_offload = "runs in which the server offloaded fewer layers than asked: {count} ({runs}); kept out — {reason}",
      .watch_invalidated = "runs an operator invalidated: {count} ({runs}) — {reason}",
      .watch_other = "runs flagged {code}: {count} ({runs}) — {reason}",
      .watch_drop_throttled = "warm runs with a throughput drop while the device throttled: {count} ({runs}) — {reason}. The device slowed down, not the software: burst and sustained are shown apart.",
      .watch_drop_contended = "warm runs with a throughput drop while the host was busy with other work: {count} ({runs}) — {reason}. The host was busy, not the device at fault.",
      .threshold_move = "Above {day} {items} a day{users}, {class} no longer keeps up: move to {ref_class}, which "
                        "carries {ref_day} {items} a day.",
      .threshold_users = ", or {users} concurrent users at the {use} target",
      .threshold_holds = "{class} keeps up with {ref_class} on this task: a dedicated GPU does not carry more here.",
      .threshold_how = "How these figures are computed:",
      .repetition_section = "Workflow v6 results",
      .repetition_intro = "As the Workflow v6 method reports them: per platform and batch size, every repetition's "
                          "value in run order, and their median from five repetitions on.",
      .col_platform = "Platform",
      .col_axis = "Batch size",
      .col_latency_ms = "{label} (ms)",
      .col_rate = "{label}",
      .col_max_memory = "Max memory (GiB)",
      .median_of = "median {median}: {values}",
      .max_of = "max {max}: {values}",
      .setting_cold_short = "cold runs",
      .short_device_used = "device memory in use",
      .short_device_buffer = "accelerator buffers",
      .short_process_rss = "process peak RSS",
      .short_process_footprint = "process footprint",
      .short_container = "container peak",
      .short_host_buffer = "host buffers",
      .short_buffer_unknown = "buffers (device unknown)",
      .short_unspecified = "memory",
      .reading_section = "How to read this guide",
  };
  return m;
}

const ModelMessages& ModelMessagesFr() {
  static const ModelMessages m{
      .verdicts_section = "Verdicts de chaque réglage",
      .targets_used = "Objectifs utilisés : {file}. Ce sont des exigences, pas des mesures ; chaque objectif ci-dessous "
                      "est cité avec sa ligne dans ce fichier.",
      .figure_rule = "Les exécutions à chaud sont jugées ; un réglage qui n'a que des exécutions à froid (un conteneur "
                     "redémarré à chaque répétition) est jugé sur celles-ci, et le dit. Le chiffre d'un réglage est sa médiane s'il compte au "
                     "moins cinq exécutions retenues, sinon sa pire exécution retenue (le débit le plus bas, le temps "
                     "le plus long) : une médiane sur peu d'appels masquerait un effondrement. Le meilleur réglage "
                     "d'une classe est celui au débit le plus élevé.",
      .task_heading = "Tâche {task}",
      .task_entry = "Entrée des objectifs {match} ; unité de travail : {item}.",
      .no_targets = "Aucune entrée des objectifs ne correspond à cette tâche : ses réglages sont listés sans verdict.",
      .use_max = "{use} : au plus {target} s par {item}",
      .use_min = "{use} : au moins {target} {items} par seconde",
      .use_interactive = " (un utilisateur simultané)",
      .no_warm_cell = "Aucune exécution retenue avec un chiffre à juger.",
      .setting_cold = "exécutions à froid seulement",
      .col_class = "Classe",
      .col_setting = "Réglage",
      .col_figure = "Chiffre",
      .col_basis = "Base",
      .col_seconds_per_item = "s/{item}",
      .col_best = "Meilleur de sa classe",
      .basis_median = "médiane",
      .basis_worst_run = "pire exécution",
      .use_ok = "convient",
      .use_not_ok = "non",
      .best_mark = "oui",
      .no_mark = "—",
      .class_sentence = "{class} : meilleur réglage {setting} : {seconds} s/{item} : {judgement}.",
      .class_sentence_no_target = "{class} : meilleur réglage {setting} : {seconds} s/{item}.",
      .fine_for = "convient pour {use}",
      .not_for = "pas pour {use}",
      .list_separator = ", ",

      .thresholds_section = "Quand passer à un GPU dédié",
      .thresholds_intro = "Capacité du meilleur réglage de chaque classe : son débit × {k3600} s/h × les heures de "
                          "travail par jour (objectifs) ; au-delà de cette charge, le réglage ne suit plus. "
                          "Utilisateurs simultanés : son débit ÷ le débit qu'il faut à un utilisateur interactif "
                          "(objectifs).",
      .no_threshold = "Aucune tâche n'a été mesurée sur au moins deux classes : pas de seuil.",
      .reference_dedicated = "Référence : {class}, un GPU dédié, réglage {setting}.",
      .reference_fastest = "Aucune classe mesurée ici n'est marquée comme GPU dédié dans les objectifs : le réglage "
                           "le plus rapide, {class} {setting}, sert de référence.",
      .capacity_line = "{class} {setting} : {ips} {items}/s × {k3600} s/h × {hours} h/jour = {day} {items}/jour",
      .users_part = " ; {ips} {items}/s ÷ {min} {items}/s par utilisateur = {users} utilisateurs simultanés",
      .other_line = "Au-delà de {day} {items}/jour, {class} ne suit plus et {ref_class} suit : {ref_ips} ÷ {ips} = "
                    "{ratio} fois son débit.",
      .other_not_slower = "{ref_class} n'est pas plus rapide que {class} : {ref_ips} ÷ {ips} = {ratio}.",

      .cost_section = "Coût",
      .cost_intro = "Coût d'une unité sur le meilleur réglage de chaque classe : le prix horaire (objectifs) ÷ "
                    "{k3600} s/h × les secondes par unité.",
      .no_cost = "Aucune classe mesurée n'a de prix horaire dans les objectifs : pas de coût calculé.",
      .cost_line = "{task} sur {class} {setting} : {price} {currency}/h ÷ {k3600} s/h × {seconds} s/{item} = {cost} "
                   "{currency}/{item}",
      .cost_million = " ; × {k1000000} = {cost} {currency} par million de {items}",

      .rules_section = "Règles",
      .rules_intro = "Une règle n'est imprimée que si les mesures l'étayent, et cite les chiffres sur lesquels elle "
                     "repose.",
      .no_rule = "Les mesures n'étayent encore aucune règle.",
      .rule_gpu_over_cpu = "Faire tourner {task} sur le GPU de {machine} : {ratio} fois le débit du CPU ({gpu} contre "
                           "{cpu} {items}/s ; GPU {gpu_setting}, CPU {cpu_setting}).",
      .rule_cold_start = "Tenir à part les appels à froid pour {task} sur {machine} {setting} : le premier appel prend "
                         "{ratio} fois plus de temps par {item} qu'un appel à chaud ({cold} contre {warm}).",
      .rule_cache_hits = "{task} : exécutions dont le serveur a servi le travail depuis son cache d'exécution "
                         "({codes}) : {count}. Donner à chaque exécution une entrée qui lui est propre (une nouvelle "
                         "graine) pour que le travail soit refait ; elles sont exclues de tous les chiffres.",
      .rule_prompt_cache_hits = "{task} : exécutions où le serveur a réutilisé des jetons de prompt en cache "
                                "({codes}) : {count}. Couper son cache de prompt (cache_prompt: false) ; elles sont "
                                "exclues de tous les chiffres.",
      .rule_throughput_drop = "{task} : exécutions avec une chute de débit d'un appel à chaud au suivant : {count} "
                              "(première : {reason}). Publier chaque exécution, jamais une médiane sur peu "
                              "d'appels.",
      .rule_fastest_class = "Pour {task}, {class} est la classe la plus rapide : {ratio} fois {second_class} ({best} "
                            "contre {second} {items}/s, réglage {setting}).",
      .rule_best_setting = "Sur {class} {setting}, {task} tourne le mieux avec {best_matrix} : {ratio} fois "
                           "{worst_matrix} ({best} contre {worst} {items}/s).",
      .rule_failed_setting = "{task} échoue sur {machine} {setting} : toutes les exécutions ont échoué ({count} ; "
                             "première erreur : {message}).",
      .rule_memory_need = "{task} demande jusqu'à {memory} de {kind} sur {machine} {setting}.",
      .rule_memory_need_of = "{task} demande jusqu'à {memory} de {kind} sur {machine} {setting}, sur les "
                             "{capacity} que donnent ses conditions.",
      .rule_fastest_drop = "{drop_class} atteint {burst} {items}/s lors de ses premiers appels à chaud, puis chute à "
                           "partir de l'appel {drop_call} : la comparaison porte sur le débit qu'elle tient.",
      .rule_cheapest = "Pour {task}, {class} est la machine la moins chère qui atteint tous les objectifs : {cost} "
                       "{per} ({setting}), {ratio} fois moins que {second_class} ({second_cost} {per}).",
      .rule_per_million = "{currency} par million de {items}",
      .rule_per_item = "{currency} par {item}",

      .image = "image",
      .images = "images",
      .token = "jeton",
      .tokens = "jetons",
      .request = "requête",
      .requests = "requêtes",
      .run = "exécution",
      .runs = "exécutions",
      .answer_heading = "La réponse",
      .answer_task = "{task} : {uses}.",
      .answer_meets_all = "atteint {met}",
      .answer_meets_some = "atteint {met}, pas {missed}",
      .answer_meets_none = "n'atteint aucun objectif",
      .and_word = " et ",
      .answer_machine = "{machine} {verdict} ({details})",
      .answer_sustained = "{figure} en régime établi à partir de l'appel {call}, après une pointe à {burst}",
      .answer_no_target = "{task} : aucune entrée des objectifs ne correspond à cette tâche ; ses chiffres sont "
                          "listés sans verdict.",
      .contents = "Sommaire",
      .decision_section = "Tableaux de décision",
      .decision_intro = "Une ligne par classe de machine : son meilleur réglage (le débit le plus élevé parmi ses "
                        "réglages à chaud), jugé au regard des objectifs. Pointe : les premiers appels à chaud ; "
                        "régime établi : les appels à partir du premier signalé comme une chute. Un chiffre est "
                        "une médiane à partir de cinq exécutions, avec son intervalle de confiance et son "
                        "coefficient de variation (CV), sinon la valeur de chaque exécution ou leur étendue.",
      .decision_targets = "Objectifs : {targets}.",
      .col_machine = "Machine",
      .col_verdict = "Verdict",
      .col_working_setting = "Réglage retenu",
      .col_burst = "Pointe ({label})",
      .col_sustained = "Régime établi ({label})",
      .col_runs = "Exécutions",
      .col_memory = "Mémoire nécessaire",
      .col_cost = "Coût",
      .col_energy = "Énergie",
      .verdict_judged_sustained = "— jugé sur le régime établi, {figure} ({basis}) : le débit chute à partir de "
                                  "l'appel {call}",
      .level_runs = "{range} (appels {calls})",
      .no_drop = "pas de chute",
      .runs_excluded = "{runs} ; {excluded} exclues",
      .memory_of = "{memory} sur {capacity} ({kind})",
      .memory_no_capacity = "{memory} ({kind})",
      .not_measured = "non mesurée",
      .no_price = "pas de prix",
      .no_cost_column = "Coût : aucune classe de cette tâche n'a de prix dans les objectifs.",
      .no_energy_column = "Énergie : non mesurée (pas de compteur d'énergie sur ces exécutions).",
      .per_million = "{cost} {currency} par million de {items}",
      .per_item = "{cost} {currency} par {item}",
      .watch_section = "Points de vigilance",
      .watch_intro = "Les pièges et signalements que portent les enregistrements, en clair ; chacun nomme ses "
                     "exécutions (identifiants courts ; les identifiants complets et les mots des serveurs sont "
                     "sous « Tous les signalements »).",
      .watch_none = "Aucune exécution n'est signalée.",
      .watch_cache_hit = "exécutions servies par le cache d'exécution du serveur : {count} ({runs}). Rien n'a été mesuré ; de telles exécutions sont exclues de tous les chiffres. Donner à chaque exécution une entrée qui lui est propre (une nouvelle graine).",
      .watch_prompt_cache = "exécutions où le serveur a réutilisé des jetons de prompt en cache : {count} ({runs}) ; exclues de tous les chiffres. Couper son cache de prompt.",
      .watch_drop = "exécutions à chaud avec une chute de débit : {count} ({runs}) — {reason}. La pointe et le régime établi sont présentés à part.",
      .watch_failed = "exécutions en échec : {count} ({runs}) — {reason}",
      .watch_contended = "exécutions pendant lesquelles la machine était occupée par d'autres travaux : {count} ({runs}) ; exclues — {reason}",
      .watch_throttled = "exécutions pendant lesquelles le composant a réduit sa fréquence : {count} ({runs}) — {reason}",
      .watch_no_offload = "exécutions où le serveur n'a déchargé aucune couche sur le GPU : {count} ({runs}) ; exclues — {reason}",
      .watch_partial_offload = "exécutions où le serveur a déchargé moins de couches que demandé : {count} ({runs}) ; exclues — {reason}",
      .watch_invalidated = "exécutions invalidées par un opérateur : {count} ({runs}) — {reason}",
      .watch_other = "exécutions signalées {code} : {count} ({runs}) — {reason}",
      .watch_drop_throttled = "exécutions à chaud avec une chute de débit pendant un bridage de l'accélérateur : {count} ({runs}) — {reason}. C'est le composant qui a ralenti, pas le logiciel : la pointe et le régime établi sont présentés à part.",
      .watch_drop_contended = "exécutions à chaud avec une chute de débit pendant que la machine était occupée par d'autres travaux : {count} ({runs}) — {reason}. La machine était occupée ; le composant n'est pas en cause.",
      .threshold_move = "Au-delà de {day} {items} par jour{users}, {class} ne suit plus : passer à {ref_class}, qui "
                        "traite {ref_day} {items} par jour.",
      .threshold_users = ", ou de {users} utilisateurs simultanés à l'objectif {use}",
      .threshold_holds = "{class} suit {ref_class} sur cette tâche : un GPU dédié n'apporte pas plus ici.",
      .threshold_how = "Le calcul de ces chiffres :",
      .repetition_section = "Résultats Workflow v6",
      .repetition_intro = "Tels que la méthode Workflow v6 les présente : par plateforme et taille de lot, la valeur "
                          "de chaque répétition dans l'ordre des exécutions, et leur médiane à partir de cinq "
                          "répétitions.",
      .col_platform = "Plateforme",
      .col_axis = "Taille de lot",
      .col_latency_ms = "{label} (ms)",
      .col_rate = "{label}",
      .col_max_memory = "Mémoire max. (Gio)",
      .median_of = "médiane {median} : {values}",
      .max_of = "max. {max} : {values}",
      .setting_cold_short = "à froid",
      .short_device_used = "mémoire de l'accélérateur occupée",
      .short_device_buffer = "tampons sur l'accélérateur",
      .short_process_rss = "pic de RSS du processus",
      .short_process_footprint = "empreinte du processus",
      .short_container = "pic du conteneur",
      .short_host_buffer = "tampons sur l'hôte",
      .short_buffer_unknown = "tampons (support inconnu)",
      .short_unspecified = "mémoire",
      .reading_section = "Comment lire ce guide",
  };
  return m;
}

}  // namespace benchfleet::synthesis
