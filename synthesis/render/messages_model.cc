#include "synthesis/render/messages_model.h"

namespace benchfleet::synthesis {

const ModelMessages& ModelMessagesEn() {
  static const ModelMessages m{
      .verdicts_section = "Verdicts",
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

      .thresholds_section = "Thresholds for moving to a dedicated GPU",
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
      .rule_memory_need = "{task} needs up to {gib} GiB of {kind} on {machine} {setting}.",

      .image = "image",
      .images = "images",
      .token = "token",
      .tokens = "tokens",
      .request = "request",
      .requests = "requests",
      .run = "run",
      .runs = "runs",
  };
  return m;
}

const ModelMessages& ModelMessagesFr() {
  static const ModelMessages m{
      .verdicts_section = "Verdicts",
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

      .thresholds_section = "Seuils de passage à un GPU dédié",
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
      .rule_memory_need = "{task} demande jusqu'à {gib} Gio de {kind} sur {machine} {setting}.",

      .image = "image",
      .images = "images",
      .token = "jeton",
      .tokens = "jetons",
      .request = "requête",
      .requests = "requêtes",
      .run = "exécution",
      .runs = "exécutions",
  };
  return m;
}

}  // namespace benchfleet::synthesis
